"""Repair: resolve the gaps of READY EXTERNAL series from the venue's history, and say whether
any gap is unresolved now (health reads it).

A gap is time inside a series not observed (the node was down or disconnected) or, on
EXTERNAL, an observed minute without its candle (the candle feed skipped it). A pass asks the
history source for the spans of each READY series' unresolved gaps; the answer observes the
span, a candle that comes back goes through the live path as a late bar (the series inserts
it and re-emits the derived buckets it repairs), and a minute the answer covers without a
candle is confirmed empty: the venue had nothing to send, so it is no gap (the fold treats it
as a no-trade minute). The work is bounded: at most ``max_requests`` requests a pass, each at
most ``max_minutes`` long (gaps closer than ``merge_minutes`` share one), instruments taken in
turn across passes; an instrument whose request failed waits ``retry_secs`` of venue time.
The requests themselves run off the event loop (the history sources do), and so does writing
the confirmed spans (:mod:`spine.node.persist.confirmed_state`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from spine.node.hydration import HydrationBook
from spine.node.hydrator import HistorySource
from spine.node.persist.confirmed_state import ConfirmedState
from spine.node.persist.series_book import SeriesBook

__all__ = ["GapWatch", "RepairCounters", "Repairer", "requests_for"]

MINUTE_NS = 60 * 10**9


@dataclass
class RepairCounters:
    """Real counts since start."""

    passes: int = 0
    requests: int = 0
    candles: int = 0
    failures: int = 0


def requests_for(spans: list[tuple[int, int]], merge_ns: int, max_ns: int) -> Iterator[tuple[int, int]]:
    """The requests covering ``spans`` (sorted): spans closer than ``merge_ns`` share one, and
    none is longer than ``max_ns`` (a long gap is asked for in pieces, oldest first)."""
    merged: list[list[int]] = []
    for start, end in spans:
        if merged and start - merged[-1][1] < merge_ns and end - merged[-1][0] <= max_ns:
            merged[-1][1] = end
        else:
            merged.append([start, end])
    for start, end in merged:
        while start < end:
            yield start, min(end, start + max_ns)
            start += max_ns


class Repairer:
    """See the module docs. ``take(instrument_id, bar)`` is the live path for one EXTERNAL
    bar; ``confirm(instrument_id, start, end)`` confirms a span's minutes without a bar
    empty (and publishes the buckets that completes)."""

    def __init__(
        self,
        *,
        book: HydrationBook,
        series: SeriesBook,
        source: HistorySource,
        now: Callable[[], int],
        take: Callable[[str, Any], None],
        confirm: Callable[[str, int, int], None],
        state: ConfirmedState | None = None,
        grace_ns: int = 5 * 10**9,
        every_secs: float = 1.0,
        max_requests: int = 8,
        max_minutes: int = 240,
        merge_minutes: int = 60,
        retry_secs: float = 60.0,
    ) -> None:
        self.book, self.series, self.source, self.now = book, series, source, now
        self.take, self.confirm, self.state = take, confirm, state
        self.grace_ns, self.every_secs = grace_ns, every_secs
        self.max_requests, self.max_ns, self.merge_ns = max_requests, max_minutes * MINUTE_NS, merge_minutes * MINUTE_NS
        self.retry_ns = round(retry_secs * 1e9)
        self.counters = RepairCounters()
        self._turn = 0
        self._not_before: dict[str, int] = {}
        self._clean: dict[str, int] = {}

    async def run_forever(self) -> None:
        """A pass every ``every_secs`` (a task for the node's lifetime)."""
        while True:
            await asyncio.sleep(self.every_secs)
            await self.repair_once()

    def plan(self) -> list[tuple[str, int, int]]:
        """This pass' requests: READY series in turn, each gap once its grace has passed."""
        now = self.now()
        horizon = (now - self.grace_ns) // MINUTE_NS * MINUTE_NS
        ready = [
            iid for iid in sorted(self.series.instruments()) if iid in self.book and self.book.state(iid) == "READY"
        ]
        planned: list[tuple[str, int, int]] = []
        for k in range(len(ready)):
            iid = ready[(self._turn + k) % len(ready)]
            series = self.series.series(iid, "EXTERNAL")
            if self._not_before.get(iid, 0) > now or self._clean.get(iid) == series.revision:
                continue
            gaps = series.unresolved()
            if not gaps:
                self._clean[iid] = series.revision  # not walked again until the series moves
            spans = [(s, min(e, horizon)) for s, e in gaps if s < horizon]
            for start, end in requests_for(spans, self.merge_ns, self.max_ns):
                planned.append((iid, start, end))
                if len(planned) >= self.max_requests:
                    self._turn = (self._turn + k + 1) % len(ready)
                    return planned
        return planned

    async def repair_once(self) -> int:
        """One pass; returns the requests made."""
        self.counters.passes += 1
        planned = self.plan()
        for instrument_id, start, end in planned:
            self.counters.requests += 1
            answer = await self.source.fetch(instrument_id, start, end)
            if answer.outcome in ("history", "no_history"):
                self._apply(instrument_id, start, end, answer.bars)
            else:
                self.counters.failures += 1
                self._not_before[instrument_id] = self.now() + self.retry_ns
        await self.save()
        return len(planned)

    def _apply(self, instrument_id: str, start: int, end: int, bars: list[Any]) -> None:
        """The venue answered for ``[start, end)``: observed now; its candles for minutes the
        series lacks are late bars; the minutes still without one are confirmed empty."""
        series = self.series.series(instrument_id, "EXTERNAL")
        lacking = [(s, e) for s, e in series.unresolved() + series.confirmed_empty() if s < end and e > start]
        series.observe(start, end)
        for bar in bars:
            close = int(bar.ts_event)
            if start < close <= end and any(s <= close - MINUTE_NS and close <= e for s, e in lacking):
                self.counters.candles += 1
                self.take(instrument_id, bar)
        self.confirm(instrument_id, start, end)

    async def save(self) -> None:
        """Write the confirmed spans when they changed (off the loop)."""
        if self.state is None:
            return
        spans = {iid: s.confirmed_empty() for iid, channel, s in self.series.held() if channel == "EXTERNAL"}
        spans = {iid: found for iid, found in spans.items() if found}
        if self.state.changed(spans):
            await asyncio.to_thread(self.state.save, spans)


class GapWatch:
    """Whether a held EXTERNAL series has an unresolved gap now. Health is polled hard: each
    series is asked again only when its revision moved (it moves with every bar and every
    observed minute, so the answer is never stale)."""

    def __init__(self, series: SeriesBook) -> None:
        self.series = series
        self._seen: dict[str, tuple[int, bool]] = {}

    def unresolved(self) -> bool:
        for instrument_id, channel, series in self.series.held():
            if channel != "EXTERNAL":
                continue
            revision = series.revision
            seen = self._seen.get(instrument_id)
            if seen is None or seen[0] != revision:
                seen = self._seen[instrument_id] = (revision, series.has_unresolved())
            if seen[1]:
                return True
        return False
