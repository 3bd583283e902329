"""What a venue node keeps on disk and reads back at start: the catalog stores of closed bars,
the series book they are served from, each series' state beside the catalogs, the flush
checkpoint, the sequence reservation, the confirmed-empty minutes and the hydration record,
written whole through :mod:`~spine.node.persist.atomic`; :mod:`~spine.node.persist.reload`
loads them back."""
