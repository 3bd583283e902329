"""The repair pass over a fake history source: what it asks for (READY series only, each gap
once its grace has passed, bounded per pass, in turn), and what an answer does (candles are
late bars, the minutes left without one are confirmed empty, failures wait), plus the
confirmed spans kept across a restart and the health check of unresolved gaps."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from spine.node.hydration import HydrationBook
from spine.node.hydrator import Answer
from spine.node.persist.confirmed_state import ConfirmedState
from spine.node.persist.series_book import SeriesBook
from spine.node.repair import GapWatch, Repairer, requests_for

M = 60 * 10**9
T0 = 483_334 * 60 * M  # on the hour: [T0, T0 + 60 min) is one 1h bucket
A, B, C = "AAAUSDT.SIM", "BBBUSDT.SIM", "CCCUSDT.SIM"


def candle(minute: int) -> SimpleNamespace:
    """A venue candle closing at ``T0 + minute`` minutes (what ``take`` receives)."""
    price = 100 + minute
    return SimpleNamespace(ts_event=T0 + minute * M, values=(price, price + 2, price - 1, price + 1, 10))


class FakeHistory:
    """A venue history with the candles of ``have`` per instrument; ``refuse`` answers
    transient failures."""

    def __init__(self, have: dict[str, set[int]], refuse: set[str] = frozenset()) -> None:  # type: ignore[assignment]
        self.have, self.refuse = have, refuse
        self.asked: list[tuple[str, int, int]] = []

    async def fetch(self, instrument_id: str, start_ns: int, end_ns: int) -> Answer:
        self.asked.append((instrument_id, (start_ns - T0) // M, (end_ns - T0) // M))
        if instrument_id in self.refuse:
            return Answer("transient", error="timed out")
        bars = [candle(m) for m in sorted(self.have.get(instrument_id, ())) if start_ns < T0 + m * M <= end_ns]
        return Answer("history", bars)


def node(
    skipped: dict[str, list[int]], *, ready: tuple[str, ...] = (A, B, C), minutes: int = 60, **options: Any
) -> tuple[SeriesBook, Repairer, FakeHistory, list[int]]:
    """Series observing ``[T0, T0 + minutes)`` with a candle per minute except ``skipped``;
    a repairer over them with the venue clock at the end plus the grace."""
    series = SeriesBook()
    book = HydrationBook()
    for iid, gaps in skipped.items():
        series.register(iid, 2, 3)
        external = series.series(iid, "EXTERNAL")
        for minute in range(1, minutes + 1):
            if minute not in gaps:
                external.push(T0 + minute * M, *candle(minute).values)
        external.observe(T0, T0 + minutes * M)
        book.register([iid], 0)
        if iid in ready:
            book.start(iid, 0)
            book.outcome(iid, "history", 0)
    source = FakeHistory(options.pop("have", {}), options.pop("refuse", set()))
    taken: list[int] = []

    def take(iid: str, bar: Any) -> None:
        taken.append((bar.ts_event - T0) // M)
        series.series(iid, "EXTERNAL").push(bar.ts_event, *bar.values)

    repairer = Repairer(
        book=book,
        series=series,
        source=source,
        now=lambda: T0 + minutes * M + 5 * 10**9,
        take=take,
        confirm=lambda iid, s, e: series.series(iid, "EXTERNAL").confirm_empty(s, e),
        grace_ns=5 * 10**9,
        **options,
    )
    return series, repairer, source, taken


def test_a_missing_candle_comes_back_as_a_late_bar_and_the_rest_are_confirmed_empty() -> None:
    series, repairer, source, taken = node({A: [7, 23, 40]}, have={A: {5, 6, 7, 23, 24}}, merge_minutes=0)
    external = series.series(A, "EXTERNAL")
    assert external.unresolved() == [(T0 + 6 * M, T0 + 7 * M), (T0 + 22 * M, T0 + 23 * M), (T0 + 39 * M, T0 + 40 * M)]
    assert external.fold("1h").withheld() and len(external.fold("1h")) == 0
    assert asyncio.run(repairer.repair_once()) == 3
    assert source.asked == [(A, 6, 7), (A, 22, 23), (A, 39, 40)]
    assert taken == [7, 23]  # only the candles of minutes the series lacked
    assert external.unresolved() == [] and external.confirmed_empty() == [(T0 + 39 * M, T0 + 40 * M)]
    assert not external.fold("1h").withheld() and len(external.fold("1h")) == 1 and len(external) == 60 - 1
    assert asyncio.run(repairer.repair_once()) == 0  # nothing left to ask


def test_gaps_close_together_share_a_request_and_long_ones_are_cut() -> None:
    assert list(requests_for([(0, M), (5 * M, 6 * M), (100 * M, 101 * M)], 60 * M, 1_000 * M)) == [
        (0, 6 * M),
        (100 * M, 101 * M),
    ]
    assert list(requests_for([(0, 500 * M)], 60 * M, 240 * M)) == [(0, 240 * M), (240 * M, 480 * M), (480 * M, 500 * M)]
    series, repairer, source, _ = node({A: [7, 9]})
    asyncio.run(repairer.repair_once())
    assert source.asked == [(A, 6, 9)]
    assert series.series(A, "EXTERNAL").confirmed_empty() == [(T0 + 6 * M, T0 + 7 * M), (T0 + 8 * M, T0 + 9 * M)]


def test_only_ready_series_are_repaired_and_an_outage_inside_one_is_backfilled() -> None:
    series, repairer, source, taken = node({A: [3], B: [3]}, ready=(A,), have={A: {61, 62, 63}})
    external = series.series(A, "EXTERNAL")
    external.observe(T0 + 70 * M, T0 + 80 * M)  # down for [60, 70): unobserved inside the series
    repairer.now = lambda: T0 + 80 * M + 5 * 10**9
    asyncio.run(repairer.repair_once())
    assert source.asked == [(A, 2, 80)]  # one request for both; B is not READY (still hydrating)
    assert taken == [61, 62, 63]
    assert external.unresolved() == [] and external.coverage() == [(T0, T0 + 80 * M)]
    assert series.series(B, "EXTERNAL").unresolved() == [(T0 + 2 * M, T0 + 3 * M)]


def test_a_gap_inside_its_grace_is_not_asked_for_yet() -> None:
    series, repairer, source, _ = node({A: [60]})
    repairer.now = lambda: T0 + 60 * M + 4 * 10**9  # the minute closing at 60 is 4 s old
    asyncio.run(repairer.repair_once())
    assert source.asked == []
    repairer.now = lambda: T0 + 60 * M + 5 * 10**9
    asyncio.run(repairer.repair_once())
    assert source.asked == [(A, 59, 60)]


def test_requests_per_pass_are_bounded_and_instruments_take_turns() -> None:
    skipped = [4 * k for k in range(1, 15)]
    series, repairer, source, _ = node({A: skipped, B: skipped, C: skipped}, merge_minutes=0, max_requests=5)
    asyncio.run(repairer.repair_once())
    assert [iid for iid, _, _ in source.asked] == [A] * 5
    asyncio.run(repairer.repair_once())
    assert [iid for iid, _, _ in source.asked[5:]] == [B] * 5  # the next instrument's turn
    for _ in range(20):
        asyncio.run(repairer.repair_once())
    assert not any(series.series(i, "EXTERNAL").unresolved() for i in (A, B, C))
    assert len(source.asked) == 3 * len(skipped)


def test_a_failed_request_waits_before_it_is_asked_again() -> None:
    series, repairer, source, _ = node({A: [7]}, refuse={A}, retry_secs=30)
    asyncio.run(repairer.repair_once())
    asyncio.run(repairer.repair_once())
    assert len(source.asked) == 1 and repairer.counters.failures == 1
    assert series.series(A, "EXTERNAL").unresolved()  # still a gap: nothing answered for it
    later = repairer.now() + 30 * 10**9
    repairer.now = lambda: later
    asyncio.run(repairer.repair_once())
    assert len(source.asked) == 2


def test_confirmed_minutes_are_kept_across_a_restart(tmp_path: Path) -> None:
    series, repairer, _, _ = node({A: [7, 23]})
    repairer.state = ConfirmedState(tmp_path)
    asyncio.run(repairer.repair_once())
    confirmed = series.series(A, "EXTERNAL").confirmed_empty()
    assert confirmed and (tmp_path / "confirmed_empty.json").exists()
    reloaded, _, _, _ = node({A: [7, 23]}, ready=())
    ConfirmedState(tmp_path).apply(reloaded)
    assert reloaded.series(A, "EXTERNAL").confirmed_empty() == confirmed
    assert reloaded.series(A, "EXTERNAL").unresolved() == []
    (tmp_path / "confirmed_empty.json").write_text("[1, 2")
    assert ConfirmedState(tmp_path).loaded == {}  # unreadable: asked for again


def test_the_gap_watch_answers_from_each_series_revision() -> None:
    series, repairer, _, _ = node({A: [], B: [7]})
    watch = GapWatch(series)
    assert watch.unresolved()
    asyncio.run(repairer.repair_once())
    assert not watch.unresolved()
    series.series(A, "EXTERNAL").observe(T0 + 70 * M, T0 + 71 * M)  # an outage inside A now
    assert watch.unresolved()
