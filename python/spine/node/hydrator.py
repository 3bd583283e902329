"""Hydration: fetch each retained instrument's EXTERNAL candle history into its series and the
catalog, driving the :class:`~spine.node.hydration.HydrationBook` state machine.

The window asked for is the gap above the series' own newest close (its resume hint) when the series
finished hydrating in an earlier run (READY or NO_HISTORY, kept by
:mod:`spine.node.persist.hydration_state`), so it asks only for what it missed; any other series
(empty, or holding only live bars because the node stopped before its hydration finished) asks for
the whole ``window_minutes``. A history answer also counts as observation of the whole window (the
venue said what happened in it), so its minutes are covered, and a minute of it without a candle is
confirmed empty (no gap: see :mod:`spine.node.repair`) once its grace has passed. Transient failures
are retried on the book's backoff; no history marks the series exhausted. INTERNAL bars have no
history: they are built from live trades only, and are never filled from candles.

A source may say more (the catalog venue's does, :mod:`spine.node.catalog_venue`): a
``span(instrument_id, bars)`` method gives the window holding the instrument's newest ``bars``
bars (the series' capacity) whatever their age, used instead of ``window_minutes`` back from the
clock (a resumed window runs from the series' newest close to that span's end; no span: no
history), and ``confirms_empty = False`` says a minute its answer holds no bar for is not
confirmed empty (it stays a gap).

Each instrument that finishes is told to ``on_finished``: the node flushes its catalogs then,
so a run reading them sees the history the node serves (docs/contract.md, Hydration).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

import numpy as np

from spine.node.hydration import HydrationBook
from spine.node.persist.hydration_state import Finished
from spine.node.persist.series_book import SeriesBook, mantissas
from spine.node.persist.store import CatalogStore
from spine.wire.bar_types import bar_type_of

__all__ = ["Answer", "FrameworkHistory", "HistorySource", "Hydrator", "SimHistory"]

MINUTE_NS = 60 * 10**9
#: Minutes of simulated history generated per loop step.
SIM_SLICE_MINUTES = 50
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Answer:
    """A history answer: ``outcome`` is history, no_history, transient or failed."""

    outcome: str
    bars: list[Any] = field(default_factory=list)
    error: str | None = None


class HistorySource(Protocol):
    async def fetch(self, instrument_id: str, start_ns: int, end_ns: int) -> Answer: ...


class SimHistory:
    """The simulated venue's history endpoint, asked directly (it answers every outcome).

    Its history is generated, not fetched: CPU work that, on a worker thread, would fight the
    loop for the GIL (the loop waits a switch interval each time it wants it back, every step).
    So it is generated on the loop, :data:`SIM_SLICE_MINUTES` minutes per loop step."""

    def __init__(self, client: Any) -> None:
        self._client = client

    async def fetch(self, instrument_id: str, start_ns: int, end_ns: int) -> Answer:
        refused = self._client.history.refusal(instrument_id)
        if refused is not None:
            return Answer(refused.outcome, [], refused.error)
        instrument = next(i for i in self._client._instruments if str(i.id) == instrument_id)
        bars: list[Any] = []
        for low in range(start_ns, end_ns, SIM_SLICE_MINUTES * MINUTE_NS):
            high = min(low + SIM_SLICE_MINUTES * MINUTE_NS, end_ns)
            bars += [
                self._client.candle_bar(instrument, c) for c in self._client.history.candles(instrument_id, low, high)
            ]
            await asyncio.sleep(0)
        return Answer("history", bars)


class FrameworkHistory:
    """History through the framework's ``request_bars``: what every nautilus adapter (Binance,
    Bybit, ...) implements. The actor collects the answer's bars; the request's callback says
    the answer is complete. The framework has no failure response: an adapter that fails
    answers nothing, which after ``timeout_secs`` is a transient failure (retried on the
    book's backoff until its attempts run out). An empty answer is no history."""

    def __init__(self, actor: Any, timeout_secs: float = 30.0) -> None:
        self._actor = actor
        self.timeout_secs = timeout_secs

    async def fetch(self, instrument_id: str, start_ns: int, end_ns: int) -> Answer:
        from nautilus_trader.model.data import BarType

        bar_type = BarType.from_str(bar_type_of(instrument_id, "1m", "EXTERNAL"))
        answered: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        bars = self._actor.collect_history(str(bar_type))
        try:
            self._actor.request_bars(
                bar_type, start=_utc(start_ns), end=_utc(end_ns), callback=lambda _request_id: _resolve(answered)
            )
            await asyncio.wait_for(answered, self.timeout_secs)
        except TimeoutError:
            return Answer("transient", error=f"no history answer for {instrument_id} within {self.timeout_secs:g} s")
        except Exception as error:  # noqa: BLE001 - the request itself was refused: say why
            return Answer("failed", error=f"history request for {instrument_id} refused: {error}")
        finally:
            self._actor.stop_collecting(str(bar_type))
        inside = sorted((b for b in bars if start_ns < b.ts_event <= end_ns), key=lambda b: b.ts_event)
        return Answer("history" if inside else "no_history", inside)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _utc(ns: int) -> datetime:
    """Nanoseconds as an aware datetime (exact to the microsecond; windows are whole minutes)."""
    return EPOCH + timedelta(microseconds=ns // 1_000)


class Hydrator:
    """See the module docs."""

    def __init__(
        self,
        *,
        book: HydrationBook,
        series: SeriesBook,
        store: CatalogStore,
        source: HistorySource,
        now: Callable[[], int],
        window_minutes: int,
        finished: dict[str, Finished] | None = None,
        grace_ns: int = 0,
        on_finished: Callable[[str], None] | None = None,
    ) -> None:
        self.book = book
        #: Told each instrument whose hydration finished (the node flushes it to its catalog).
        self.on_finished = on_finished
        self.series = series
        self.store = store
        self.source = source
        self.now = now
        self.window_minutes = window_minutes
        self.grace_ns = grace_ns
        self.exhausted: set[str] = set()
        #: Every window asked for, ``(instrument_id, start_ns, end_ns)`` (operators and tests read it).
        self.requests: list[tuple[str, int, int]] = []
        self._windows: dict[str, tuple[int, int]] = {}
        #: Instruments that finished hydrating, in an earlier run or this one.
        self.finished: dict[str, Finished] = dict(finished or {})
        self._undurable: set[str] = set()
        self._span: Callable[[str, int], tuple[int, int] | None] | None = getattr(source, "span", None)
        self.confirms_empty: bool = getattr(source, "confirms_empty", True)

    def window(self, instrument_id: str) -> tuple[int, int]:
        """Up to the last whole minute when hydration started (live bars cover what follows),
        from the series' newest close if it finished hydrating before, else ``window_minutes``
        back. Fixed at the first attempt, so a retry asks for the same window even after
        live bars have arrived above it."""
        fixed = self._windows.get(instrument_id)
        if fixed is None:
            end = self.now() // MINUTE_NS * MINUTE_NS
            # From the newest close, not from the end of its observed span: on EXTERNAL the
            # observed minutes above the newest close hold no candle, so they are gaps, and
            # only a request that covers them can resolve them.
            newest = self.series.series(instrument_id, "EXTERNAL").resume_hint()["newest_ts_event"]
            resumes = newest is not None and instrument_id in self.finished
            start = newest if newest is not None and resumes else end - self.window_minutes * MINUTE_NS
            if self._span is not None:
                held = self._span(instrument_id, self.series.capacity)
                if held is None:
                    start = end  # nothing to ask for (see attempt)
                else:
                    first, end = held
                    start = max(newest, first) if newest is not None and resumes else first
            fixed = self._windows[instrument_id] = (start, end)
        return fixed

    def settled(self) -> dict[str, Finished]:
        """The instruments that finished hydrating whose history is durable now (the catalog
        holds the newest bar their answers held): what a restart may resume from."""
        for instrument_id in list(self._undurable):
            newest = self.finished[instrument_id].newest
            # Cached by the store since _take read it: no catalog read here.
            last = None if newest is None else self.store.last_close(bar_type_of(instrument_id, "1m", "EXTERNAL"))
            if newest is None or (last is not None and last >= newest):
                self._undurable.discard(instrument_id)
        return {iid: done for iid, done in self.finished.items() if iid not in self._undurable}

    def _finish(self, instrument_id: str, state: str, start: int, end: int, newest: int | None) -> None:
        before = self.finished.get(instrument_id)
        if before is not None:
            start, end = min(start, before.start), max(end, before.end)
            newest = max((t for t in (newest, before.newest) if t is not None), default=None)
        self.finished[instrument_id] = Finished(state, start, end, newest)
        self._undurable.add(instrument_id)
        if self.on_finished is not None:
            self.on_finished(instrument_id)

    async def hydrate_all(self, instrument_ids: list[str]) -> None:
        """Start every instrument, one request at a time, yielding to the loop between them."""
        self.book.register(instrument_ids, self.now())
        for instrument_id in instrument_ids:
            # Every window is fixed before the first await: live bars reaching an empty series
            # while earlier instruments hydrate must not move its window above them.
            self.window(instrument_id)
        for instrument_id in instrument_ids:
            self.book.start(instrument_id, self.now())
            await self.attempt(instrument_id)
            await asyncio.sleep(0)

    async def retry_forever(self, poll_secs: float = 0.5) -> None:
        """Retry instruments whose backoff has passed (a task for the node's lifetime)."""
        while True:
            await asyncio.sleep(poll_secs)
            for instrument_id in self.book.due(self.now()):
                await self.attempt(instrument_id)

    async def attempt(self, instrument_id: str) -> None:
        """One history request for a HYDRATING instrument, and its outcome."""
        start, end = self.window(instrument_id)
        if start >= end:
            if self._span is not None and self._span(instrument_id, self.series.capacity) is None:
                self._no_history(instrument_id, start, end)  # the source holds nothing of it
                return
            self.book.outcome(instrument_id, "history", self.now())
            self._finish(instrument_id, "READY", start, end, None)
            return
        self.requests.append((instrument_id, start, end))
        answer = await self.source.fetch(instrument_id, start, end)
        if answer.outcome == "history":
            taken = self._take(instrument_id, answer.bars, start, end)
            self.book.outcome(instrument_id, "history", self.now(), bars=taken)
            newest = max((int(b.ts_event) for b in answer.bars), default=None)
            self._finish(instrument_id, "READY", start, end, newest)
        elif answer.outcome == "no_history":
            self._no_history(instrument_id, start, end)
        else:
            self.book.outcome(
                instrument_id,
                answer.outcome,  # type: ignore[arg-type]
                self.now(),
                error=answer.error or f"{answer.outcome} history failure",
            )

    def _no_history(self, instrument_id: str, start: int, end: int) -> None:
        self.exhausted.add(instrument_id)
        self.book.outcome(instrument_id, "no_history", self.now())
        self._finish(instrument_id, "NO_HISTORY", start, end, None)

    def _take(self, instrument_id: str, bars: list[Any], start: int, end: int) -> int:
        series = self.series.series(instrument_id, "EXTERNAL")
        series.observe(start, end)
        taken = 0
        if bars:
            p = self.series.precision(instrument_id)
            rows = np.array([mantissas(b, p.price, p.size) for b in bars], dtype=np.int64)
            taken = int(
                series.extend(
                    np.ascontiguousarray(rows[:, 0].astype(np.uint64)),
                    *(np.ascontiguousarray(rows[:, k]) for k in range(1, 6)),
                )
            )
        # After the bars, so only the minutes the answer held no candle for are confirmed; a
        # bulk load streams nothing, so the buckets this completes are served by pages.
        settled = min(end, (self.now() - self.grace_ns) // MINUTE_NS * MINUTE_NS)
        if settled > start and self.confirms_empty:
            series.confirm_empty(start, settled)
        # Bars older than what is durable are late bars to the store: the next flush rewrites
        # the bar type from its copy of the series, with their numbers saved beside them.
        for bar in bars:
            self.store.append(bar)
        return taken
