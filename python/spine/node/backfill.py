"""Weeks of history: the series serves an instrument's newest ``capacity`` minutes, the
catalogs keep ``retention_days`` of them. On the simulated venue, whose history is generated
rather than fetched, each instrument's EXTERNAL catalog is backfilled after hydration from its
oldest durable close back to the retention, a day per request, straight into the catalog
(never into the series, which already holds the newest bars). Backtests read the whole
catalog.

The backfill takes at most :data:`DUTY` of the loop's time (it sleeps three times as long as
each day took), so a fresh node serves as it hydrates and stays responsive while it
backfills. A restart continues below the oldest durable close; an instrument whose history is
refused is left where it stands (its series was hydrated already)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable

from spine.node.hydrator import HistorySource
from spine.node.persist.store import CatalogStore
from spine.wire.bar_types import bar_type_of

__all__ = ["Backfill"]

log = logging.getLogger("spine.node")

MINUTE_NS = 60 * 10**9
#: Minutes asked for per request (one file each).
CHUNK_MINUTES = 1_440
#: The share of the loop's time the backfill may take.
DUTY = 0.25
#: How long a run waits, in all, for instruments' first durable closes after hydration (the
#: node flushes a series as soon as it is hydrated).
DURABLE_WAIT_SECS = 30.0


class Backfill:
    """Backfills the EXTERNAL ``store`` from ``source`` (see the module docs)."""

    def __init__(self, store: CatalogStore, source: HistorySource, retention_ns: int, duty: float = DUTY) -> None:
        self.store, self.source, self.retention_ns, self.duty = store, source, retention_ns, duty
        #: Bars written so far.
        self.written = 0
        self._deadline = 0.0

    async def run(self, instrument_ids: Iterable[str]) -> None:
        """Backfill each instrument in turn (those with nothing durable yet are waited for,
        :data:`DURABLE_WAIT_SECS` in all)."""
        self._deadline = time.monotonic() + DURABLE_WAIT_SECS
        for instrument_id in instrument_ids:
            await self.instrument(instrument_id)

    async def instrument(self, instrument_id: str) -> None:
        bar_type = bar_type_of(instrument_id, "1m", "EXTERNAL")
        span = await self._durable(bar_type)
        if span is None:
            return  # nothing durable to continue below (no history, or still retrying)
        oldest, newest = span
        floor = newest - self.retention_ns
        reached = oldest - MINUTE_NS  # the newest close the catalog may still lack
        while reached > floor:
            began = time.monotonic()
            start = max(floor, reached - CHUNK_MINUTES * MINUTE_NS)
            answer = await self.source.fetch(instrument_id, start, reached)
            if answer.outcome != "history":
                log.info("backfill of %s stopped: %s %s", instrument_id, answer.outcome, answer.error or "")
                return
            self.written += await asyncio.to_thread(self.store.write_older, bar_type, answer.bars)
            reached = start
            await asyncio.sleep((time.monotonic() - began) * (1 / self.duty - 1))

    async def _durable(self, bar_type: str) -> tuple[int, int] | None:
        """The oldest and newest durable close of ``bar_type``, waited for until the run's
        deadline (None: none by then)."""
        while True:
            oldest = await asyncio.to_thread(self.store.oldest_close, bar_type)
            newest = await asyncio.to_thread(self.store.last_close, bar_type)
            if oldest is not None and newest is not None:
                return oldest, newest
            if time.monotonic() >= self._deadline:
                return None
            await asyncio.sleep(0.5)
