"""A venue node's flushes: its closed bars and its series' state written to disk.

Closed bars are flushed to the catalogs every ``flush_secs`` and as soon as a series finishes
hydrating; each flush takes a :class:`~spine.node.persist.checkpoint.Checkpoint` on the event
loop and writes from it, on a worker thread when the loop is running. A flush that wrote
everything is a checkpoint of the run (the engine status' CHECKPOINTED). A refused write is
counted and reported; its bars stay pending for the next flush.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from spine.node.persist import series_state
from spine.node.persist.checkpoint import Checkpoint
from spine.node.persist.hydration_state import Finished, HydrationState
from spine.node.persist.reload import Observed, observed_spans
from spine.node.persist.sequences import Reservation
from spine.node.persist.series_book import SeriesBook
from spine.node.persist.store import AdmissionRefused, CatalogStore
from spine.node.status import EngineStatusProducer

__all__ = ["Flushing", "Refusals"]

#: The refusals a write met, as (what, channel, refusal).
Refusals = list[tuple[str, str, AdmissionRefused]]

log = logging.getLogger("spine.node")


class Flushing:
    """The flushes of one node's ``book`` to its ``stores`` and state files under ``data_dir``
    (see the module docs). ``settled`` says which instruments finished hydrating, kept with
    each flush (None while the node has no hydrator)."""

    def __init__(
        self,
        book: SeriesBook,
        stores: Mapping[str, CatalogStore],
        data_dir: Path,
        reservation: Reservation,
        status: EngineStatusProducer,
        hydration_state: HydrationState,
        settled: Callable[[], dict[str, Finished] | None],
    ) -> None:
        self.book, self.stores, self.data_dir, self.reservation = book, stores, data_dir, reservation
        self.status, self.hydration_state, self.settled = status, hydration_state, settled
        #: Catalog and state writes refused so far (health's CATALOG_WRITES_REFUSED).
        self.refused_writes = 0
        #: The spans observed as of the last complete write (what a state file may claim).
        self._observed: Observed = observed_spans(book, stores)

    def flush(self, *, final: bool = False) -> None:
        """Write every pending closed bar (refusals are counted; the bars stay pending) and
        the series' state (sequences, coverage). A flush that wrote everything is a
        checkpoint of the run. The ``final`` flush (at a stop), when it wrote everything, marks
        the sequence reservation clean: the state files now hold every number the run handed
        out."""
        written = self._flushed(self._write(Checkpoint(self.book, self.stores)))
        if final and written:
            self.reservation.close(max((s.last_sequence for _, _, s in self.book.held()), default=0))

    def consolidate(self) -> None:
        """The periodic consolidation: each bar type's files merged into one, from its series
        (which also makes late bars durable). Refusals are counted like flushes."""
        self._flushed(self._write(Checkpoint(self.book, self.stores), consolidate=True))

    async def off_loop(self, *, consolidate: bool = False) -> None:
        """:meth:`flush` (or :meth:`consolidate`) with the file writing on a worker thread: a
        flush writes a file per bar type, tenths of a second the loop's streams and requests
        must not wait for. What it writes is taken here, on the loop, in one step (see
        ``spine.node.persist.checkpoint``); counters and status change back on the loop."""
        checkpoint = Checkpoint(self.book, self.stores)
        self._flushed(await asyncio.to_thread(self._write, checkpoint, consolidate=consolidate))

    def _write(self, checkpoint: Checkpoint, *, consolidate: bool = False) -> Refusals:
        """Write the series' state, every store, then the state again, all from
        ``checkpoint``; the refusals met.

        The sequences reach disk before the bars they number: a crash in between leaves
        numbers for bars the catalogs lack (ignored at reload), never catalog bars without
        their numbers. Until the bars are written the file keeps the spans observed as of the
        last complete write, so such a crash cannot claim minutes whose bars were lost."""
        refusals = self._write_state(checkpoint, self._observed)
        refusals += self._write_stores(checkpoint, consolidate=consolidate)
        refusals += self._write_state(checkpoint)
        self._observed = checkpoint.coverage()
        return refusals

    def _write_state(self, checkpoint: Checkpoint, observed: Observed | None = None) -> Refusals:
        refusals = []
        for channel in self.stores:
            try:
                state = checkpoint.state(channel, None if observed is None else observed.get(channel, {}))
                series_state.write(self.data_dir, channel, state)
            except OSError as error:
                refusals.append(("series state write", channel, AdmissionRefused("io_error", str(error))))
        return refusals

    def _write_stores(self, checkpoint: Checkpoint, *, consolidate: bool) -> Refusals:
        refusals = []
        for channel, store in self.stores.items():

            def series_bars(bar_type: str, channel: str = channel) -> list[Any]:
                return checkpoint.bars(bar_type, channel=channel)

            def series_oldest(bar_type: str, channel: str = channel) -> int | None:
                return checkpoint.oldest(bar_type, channel=channel)

            try:
                store.write(checkpoint.pending[channel], series_bars)
            except AdmissionRefused as refused:
                refusals.append(("write", channel, refused))
                continue
            if consolidate:
                try:
                    store.consolidate(series_bars, series_oldest)
                except AdmissionRefused as refused:
                    refusals.append(("consolidation", channel, refused))
            try:
                store.trim(series_oldest)
            except OSError as error:
                refusals.append(("retention", channel, AdmissionRefused("io_error", str(error))))
        return refusals

    def _flushed(self, refusals: Refusals) -> bool:
        """Count and report ``refusals``; whether there were none."""
        for what, channel, refused in refusals:
            self.refused_writes += 1
            self.status.record_error(f"catalog {what} refused ({channel}): {refused}")
            log.warning("catalog %s refused (%s): %s", what, channel, refused)
        if not refusals and self.status.lifecycle == "RUNNING":
            self.status.checkpoint()  # the actor resumes the run with its next bar
        self._save_hydration()
        return not refusals

    def _save_hydration(self) -> None:
        """Keep which instruments finished hydrating (with durable history) for a restart."""
        settled = self.settled()
        if settled is not None:
            try:
                self.hydration_state.save(settled)
            except OSError as error:
                self.status.record_error(f"hydration state write failed: {error}")
                log.warning("hydration state write failed: %s", error)
