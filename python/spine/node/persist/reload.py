"""A node's start from disk: every stored series loaded back into the book before the node
connects, numbered as it was served.

After a crash every series continues above the sequence reservation (numbers served after the
last flush are nowhere else); after a clean stop from its saved state. A damaged state file is
logged and its series numbered afresh above the floor.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from spine.node.persist import series_state
from spine.node.persist.sequences import Reservation
from spine.node.persist.series_book import SeriesBook, mantissas
from spine.node.persist.store import CatalogStore

__all__ = ["Observed", "observed_spans", "reload_series"]

#: Every series' observed spans, per channel and instrument.
Observed = dict[str, dict[str, list[tuple[int, int]]]]

log = logging.getLogger("spine.node")


def reload_series(
    book: SeriesBook, stores: Mapping[str, CatalogStore], data_dir: Path, reservation: Reservation
) -> int:
    """Load every stored 1-minute series of ``stores`` into ``book``; the bars reloaded."""
    total = 0
    floor = reservation.floor
    for channel, store in stores.items():
        saved = series_state.load(data_dir, channel)
        precisions = {str(i.id): (i.price_precision, i.size_precision) for i in store.instruments()}
        for bar_type in store.bar_types():
            instrument_id = bar_type.split("-1-MINUTE-")[0]
            if instrument_id not in precisions or not bar_type.endswith(f"-1-MINUTE-LAST-{channel}"):
                continue
            # The bars the series held: the catalog may hold weeks more (its retention).
            known = saved.get(instrument_id)
            since = int(known.ts_event[0]) if known is not None and len(known.ts_event) else None
            bars = store.load(bar_type, newest=book.capacity, since=since)
            if not bars:
                continue
            book.register(instrument_id, *precisions[instrument_id])
            p = book.precision(instrument_id)
            rows = np.array([mantissas(b, p.price, p.size) for b in bars], dtype=np.int64)
            ts = np.ascontiguousarray(rows[:, 0].astype(np.uint64))
            columns = [np.ascontiguousarray(rows[:, k]) for k in range(1, 6)]
            series = book.series(instrument_id, channel)
            total += series.extend(ts, *columns)
            try:
                series_state.apply(series, known, floor=0 if reservation.clean and known else floor)
            except ValueError as error:  # a damaged state file: numbered afresh above the floor
                log.warning("series state of %s %s not applied: %s", instrument_id, channel, error)
                series_state.apply(series, None, floor=floor)
    book.floor = floor
    return total


def observed_spans(book: SeriesBook, channels: Mapping[str, object]) -> Observed:
    """Every series' observed spans, per channel (each of ``channels``) and instrument."""
    out: Observed = {channel: {} for channel in channels}
    for instrument_id, channel, series in book.held():
        out[channel][instrument_id] = series.coverage()
    return out
