"""The hydration state machine: every transition and refusal of the spec's table, exact
backoff times, the wire mapping (NO_HISTORY -> READY, RETRY_WAIT -> HYDRATING), documents and
paging, and a property test over random event sequences."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference.wire_validator import validate
from spine.node.hydration import WIRE_STATE, HydrationBook, IllegalTransition, Outcome
from spine.node.hydrator import Hydrator
from spine.node.persist.hydration_state import Finished, HydrationState
from spine.node.persist.series_book import SeriesBook
from spine.wire.cursors import InvalidCursor, LimitOutOfRange

S = 1_000_000_000
A, B = "BTCUSDT.SIM", "ETHUSDT.SIM"
# The contract's mapping, written out independently of the module's table.
MAPPING = {
    "EMPTY": "EMPTY",
    "HYDRATING": "HYDRATING",
    "READY": "READY",
    "NO_HISTORY": "READY",
    "RETRY_WAIT": "HYDRATING",
    "FAILED": "FAILED",
}


def checked(document: dict[str, Any]) -> dict[str, Any]:
    validate(document, "svc.hydration_state")
    for item in document["items"]:
        assert item["state"] == MAPPING[item["internal_state"]]
    return document


def item(book: HydrationBook, iid: str) -> dict[str, Any]:
    doc = checked(book.entry(iid))
    assert doc["next_cursor"] is None and len(doc["items"]) == 1
    result: dict[str, Any] = doc["items"][0]
    return result


def hydrating(iid: str = A, now: int = 0, **backoff: int) -> HydrationBook:
    book = HydrationBook(**backoff)
    book.start(iid, now)
    return book


def test_the_module_mapping_is_the_contracts() -> None:
    assert WIRE_STATE == MAPPING


# transitions


def test_register_tracks_instruments_as_empty() -> None:
    book = HydrationBook()
    book.register([B, A], 5)
    assert book.state(A) == book.state(B) == "EMPTY"
    assert item(book, A) == {
        "instrument_id": A,
        "state": "EMPTY",
        "internal_state": "EMPTY",
        "attempts": 0,
        "next_retry_ts": None,
        "last_error": None,
        "updated_ts": "5",
    }
    book.start(A, 6)
    book.register([A], 7)  # already tracked: unchanged
    assert book.state(A) == "HYDRATING"


def test_empty_to_hydrating_on_start() -> None:
    book = HydrationBook()
    book.register([A], 0)
    book.start(A, 10)
    assert item(book, A) == {
        "instrument_id": A,
        "state": "HYDRATING",
        "internal_state": "HYDRATING",
        "attempts": 1,
        "next_retry_ts": None,
        "last_error": None,
        "updated_ts": "10",
    }


def test_start_registers_an_untracked_instrument() -> None:
    book = hydrating(B, 3)
    assert book.state(B) == "HYDRATING" and B in book


def test_hydrating_to_ready_on_history() -> None:
    book = hydrating()
    assert book.outcome(A, "history", 20, bars=42) == "READY"
    entry = item(book, A)
    assert (entry["state"], entry["internal_state"], entry["updated_ts"]) == ("READY", "READY", "20")
    assert book.bars(A) == 42


def test_hydrating_to_no_history_is_ready_on_the_wire() -> None:
    book = hydrating()
    assert book.outcome(A, "no_history", 20) == "NO_HISTORY"
    entry = item(book, A)
    assert (entry["state"], entry["internal_state"], entry["next_retry_ts"]) == ("READY", "NO_HISTORY", None)


def test_hydrating_to_retry_wait_is_hydrating_on_the_wire() -> None:
    book = hydrating()
    assert book.outcome(A, "transient", 20, error="history request timed out") == "RETRY_WAIT"
    entry = item(book, A)
    assert entry == {
        "instrument_id": A,
        "state": "HYDRATING",
        "internal_state": "RETRY_WAIT",
        "attempts": 1,
        "next_retry_ts": str(20 + S),
        "last_error": "history request timed out",
        "updated_ts": "20",
    }


def test_a_transient_failure_without_an_error_still_says_why() -> None:
    book = hydrating()
    book.outcome(A, "transient", 0)
    assert item(book, A)["last_error"] == "transient failure"


def test_hydrating_to_failed_carries_the_error() -> None:
    book = hydrating()
    assert book.outcome(A, "failed", 20, error="symbol unknown to history API") == "FAILED"
    entry = item(book, A)
    assert (entry["state"], entry["internal_state"], entry["last_error"]) == (
        "FAILED",
        "FAILED",
        "symbol unknown to history API",
    )


def test_retry_wait_to_hydrating_when_due() -> None:
    book = hydrating()
    book.outcome(A, "transient", 100, error="timeout")
    assert book.next_due_ns() == 100 + S
    assert book.due(100 + S - 1) == [] and book.state(A) == "RETRY_WAIT"
    assert book.due(100 + S) == [A]
    entry = item(book, A)
    assert entry == {
        "instrument_id": A,
        "state": "HYDRATING",
        "internal_state": "HYDRATING",
        "attempts": 2,
        "next_retry_ts": None,
        "last_error": "timeout",
        "updated_ts": str(100 + S),
    }
    assert book.due(10**12) == [] and book.next_due_ns() is None


def test_success_after_retries_clears_the_error() -> None:
    book = hydrating()
    book.outcome(A, "transient", 0, error="timeout")
    book.due(S)
    book.outcome(A, "history", S + 1, bars=3)
    entry = item(book, A)
    assert (entry["internal_state"], entry["attempts"], entry["last_error"]) == ("READY", 2, None)


def test_due_returns_every_due_instrument_sorted() -> None:
    book = HydrationBook()
    for iid in ("C.SIM", A, B):
        book.start(iid, 0)
        book.outcome(iid, "transient", 0)
    assert book.due(S) == sorted([A, B, "C.SIM"])
    assert all(book.state(i) == "HYDRATING" for i in (A, B, "C.SIM"))


# refusals

TERMINAL_SETUPS: dict[str, tuple[Outcome, dict[str, Any]]] = {
    "READY": ("history", {}),
    "NO_HISTORY": ("no_history", {}),
    "FAILED": ("failed", {"error": "x"}),
    "RETRY_WAIT": ("transient", {}),
}


@pytest.mark.parametrize("state", ["HYDRATING", *TERMINAL_SETUPS])
def test_start_outside_empty_is_refused(state: str) -> None:
    book = hydrating()
    if state in TERMINAL_SETUPS:
        outcome, kwargs = TERMINAL_SETUPS[state]
        book.outcome(A, outcome, 1, **kwargs)
    with pytest.raises(IllegalTransition, match=f"{state} -> HYDRATING") as info:
        book.start(A, 2)
    assert (info.value.from_state, info.value.to_state) == (state, "HYDRATING")
    assert book.state(A) == state


@pytest.mark.parametrize("state", ["EMPTY", *TERMINAL_SETUPS])
@pytest.mark.parametrize(
    ("outcome", "target"),
    [("history", "READY"), ("no_history", "NO_HISTORY"), ("transient", "RETRY_WAIT"), ("failed", "FAILED")],
)
def test_an_outcome_outside_hydrating_is_refused(state: str, outcome: Outcome, target: str) -> None:
    book = HydrationBook()
    book.register([A], 0)
    if state != "EMPTY":
        book.start(A, 0)
        setup, kwargs = TERMINAL_SETUPS[state]
        book.outcome(A, setup, 1, **kwargs)
    before = item(book, A)
    with pytest.raises(IllegalTransition, match=f"{state} -> {target}"):
        book.outcome(A, outcome, 2, error="e" if outcome in ("transient", "failed") else None)
    assert item(book, A) == before


def test_an_outcome_for_an_untracked_instrument_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        HydrationBook().outcome(A, "history", 0)
    with pytest.raises(KeyError):
        HydrationBook().state(A)
    with pytest.raises(KeyError):
        HydrationBook().entry(A)


@pytest.mark.parametrize(
    ("outcome", "kwargs", "match"),
    [
        ("failed", {}, "needs its error"),
        ("failed", {"error": ""}, "non-empty"),
        ("transient", {"error": ""}, "non-empty"),
        ("history", {"error": "why"}, "only with transient or failed"),
        ("history", {"bars": -1}, "bars"),
        ("no_history", {"bars": 2}, "bars"),
        ("bogus", {}, "outcome must be one of"),
    ],
)
def test_a_malformed_outcome_is_refused_and_changes_nothing(outcome: Any, kwargs: dict[str, Any], match: str) -> None:
    book = hydrating()
    with pytest.raises(ValueError, match=match):
        book.outcome(A, outcome, 1, **kwargs)
    assert book.state(A) == "HYDRATING"


@pytest.mark.parametrize("now", [-1, 2**64, True, 1.5])
def test_a_time_outside_u64_nanoseconds_is_refused(now: Any) -> None:
    book = HydrationBook()
    for call in (lambda: book.start(A, now), lambda: book.due(now), lambda: book.register([A], now)):
        with pytest.raises(ValueError, match="nanoseconds"):
            call()


@pytest.mark.parametrize("iid", ["BTCUSDT", "btc.sim", "A" * 125 + ".SIM", "B TC.SIM"])
def test_a_non_canonical_instrument_id_is_refused(iid: str) -> None:
    with pytest.raises(ValueError, match="SYMBOL.VENUE"):
        HydrationBook().start(iid, 0)


@pytest.mark.parametrize("kwargs", [{"base_ns": 0}, {"factor": 0}, {"cap_ns": 1, "base_ns": 2}, {"max_attempts": 0}])
def test_a_bad_backoff_configuration_is_refused(kwargs: dict[str, int]) -> None:
    with pytest.raises(ValueError, match="backoff"):
        HydrationBook(**kwargs)


# backoff


def run_transients(book: HydrationBook, now: int = 0) -> list[int]:
    """Fail every attempt transiently, retrying exactly when due; the delays between them."""
    book.start(A, now)
    delays = []
    while book.outcome(A, "transient", now, error="timeout") == "RETRY_WAIT":
        due = book.next_due_ns()
        assert due is not None
        delays.append(due - now)
        assert book.due(due - 1) == []
        assert book.due(due) == [A]
        now = due
    return delays


def test_default_backoff_is_1_2_4_8_16_seconds_then_failed_after_6_attempts() -> None:
    book = HydrationBook()
    assert run_transients(book, 7) == [1 * S, 2 * S, 4 * S, 8 * S, 16 * S]
    entry = item(book, A)
    assert (entry["internal_state"], entry["attempts"]) == ("FAILED", 6)
    assert entry["last_error"] == "gave up after 6 attempts: timeout"
    assert entry["updated_ts"] == str(7 + 31 * S)


def test_backoff_is_capped() -> None:
    book = HydrationBook(max_attempts=10)
    assert run_transients(book) == [1 * S, 2 * S, 4 * S, 8 * S, 16 * S, 32 * S, 60 * S, 60 * S, 60 * S]
    assert [book.delay_ns(k) for k in (1, 6, 7, 1000)] == [S, 32 * S, 60 * S, 60 * S]


def test_backoff_is_configurable() -> None:
    book = HydrationBook(base_ns=500, factor=3, cap_ns=10_000, max_attempts=7)
    assert run_transients(book) == [500, 1500, 4500, 10_000, 10_000, 10_000]
    assert book.state(A) == "FAILED"


def test_a_single_attempt_budget_fails_on_the_first_transient() -> None:
    book = hydrating(max_attempts=1)
    assert book.outcome(A, "transient", 0) == "FAILED"
    assert item(book, A)["last_error"] == "gave up after 1 attempts: transient failure"


def test_factor_one_is_a_constant_delay() -> None:
    assert run_transients(HydrationBook(base_ns=5, factor=1, cap_ns=5, max_attempts=4)) == [5, 5, 5]


# documents and counts


def test_counts_use_the_wire_vocabulary() -> None:
    book = HydrationBook()
    book.register([f"I{k}.SIM" for k in range(7)], 0)
    for k, (outcome, kwargs) in enumerate(
        [("history", {}), ("no_history", {}), ("transient", {}), ("failed", {"error": "x"})]
    ):
        book.start(f"I{k}.SIM", 0)
        book.outcome(f"I{k}.SIM", outcome, 0, **kwargs)  # type: ignore[arg-type]
    book.start("I4.SIM", 0)
    assert book.counts() == {"empty": 2, "hydrating": 2, "ready": 2, "failed": 1}


def test_paging_walks_every_instrument_once_in_id_order() -> None:
    book = HydrationBook()
    ids = [f"I{k:02d}.SIM" for k in range(23)]
    book.register(reversed(ids), 0)
    seen: list[str] = []
    cursor: str | None = None
    while True:
        doc = checked(book.page(cursor, 5))
        seen += [i["instrument_id"] for i in doc["items"]]
        if (cursor := doc["next_cursor"]) is None:
            break
    assert seen == ids


def test_a_foreign_cursor_and_a_bad_limit_are_refused() -> None:
    from spine.wire.cursors import encode_cursor

    book = HydrationBook()
    book.register([A, B], 0)
    assert checked(book.page(encode_cursor("/v2/hydration", 1), 1))["items"][0]["instrument_id"] == B
    with pytest.raises(InvalidCursor):
        book.page(encode_cursor("/v2/coverage", 1), 1)
    with pytest.raises(LimitOutOfRange, match=r"1\.\.1000"):
        book.page(None, 1001)


def test_an_empty_book_serves_an_empty_page() -> None:
    doc = checked(HydrationBook().page(None, 10))
    assert doc["items"] == [] and doc["next_cursor"] is None


# property: random event sequences

IDS = ["A.SIM", "B.SIM", "C.SIM"]
KINDS = ["register", "start", "history", "no_history", "transient", "failed", "due"]
# What the caller would legally do next in each state; the draw prefers these 3 times in 4, so
# sequences reach retries, due times and exhausted budgets, and still hit every refusal.
LEGAL: dict[str | None, list[str]] = {
    None: ["register", "start"],
    "EMPTY": ["start"],
    "HYDRATING": ["history", "no_history", "transient", "transient", "failed"],
    "RETRY_WAIT": ["due"],
    "READY": [],
    "NO_HISTORY": [],
    "FAILED": [],
}


def draw_event(data: st.DataObject, book: HydrationBook) -> tuple[str, str]:
    iid = data.draw(st.sampled_from(IDS))
    legal = LEGAL[book.state(iid) if iid in book else None]
    prefer_legal = data.draw(st.integers(0, 3)) > 0
    if legal and prefer_legal:
        return data.draw(st.sampled_from(legal)), iid
    return data.draw(st.sampled_from(KINDS)), iid


@given(st.data(), st.integers(1, 6))
def test_random_event_sequences_never_reach_an_invalid_state(data: st.DataObject, max_attempts: int) -> None:
    book = HydrationBook(max_attempts=max_attempts)
    now = 0
    for _ in range(data.draw(st.integers(0, 80))):
        kind, iid = draw_event(data, book)
        now += data.draw(st.integers(0, 3 * S))
        pending = book.next_due_ns()
        if kind == "due" and pending is not None and data.draw(st.booleans()):
            now = max(now, pending)  # often exactly at the retry time
        before = book.page(None, 1000)
        try:
            if kind == "register":
                book.register([iid], now)
            elif kind == "start":
                book.start(iid, now)
            elif kind == "due":
                expected = sorted(
                    i
                    for i in IDS
                    if i in book and book.state(i) == "RETRY_WAIT" and int(item(book, i)["next_retry_ts"]) <= now
                )
                assert book.due(now) == expected
                assert all(book.state(i) == "HYDRATING" for i in expected)
            else:
                book.outcome(iid, kind, now, error="e" if kind == "failed" else None)  # type: ignore[arg-type]
        except (IllegalTransition, KeyError):
            assert book.page(None, 1000) == before  # a refusal changes nothing
        doc = checked(book.page(None, 1000))
        counts = {"empty": 0, "hydrating": 0, "ready": 0, "failed": 0}
        for entry in doc["items"]:
            state = entry["internal_state"]
            counts[entry["state"].lower()] += 1
            assert 0 <= entry["attempts"] <= max_attempts
            assert (entry["attempts"] == 0) == (state == "EMPTY")
            assert (entry["next_retry_ts"] is not None) == (state == "RETRY_WAIT")
            if state == "FAILED":
                assert entry["last_error"]
            if state == "RETRY_WAIT":
                delay = int(entry["next_retry_ts"]) - int(entry["updated_ts"])
                assert delay == book.delay_ns(entry["attempts"])
        assert book.counts() == counts


def test_a_restarted_series_asks_from_its_newest_close_so_skipped_candles_above_it_are_asked_again() -> None:
    """The spec's resume hint: a READY series requests the gap above its own newest close. On
    EXTERNAL the observed minutes above that close hold no candle (the venue skipped them):
    gaps the request must cover, not observed time to start after."""
    minute = 60 * S
    close = 29_000_000 * minute
    series = SeriesBook()
    series.register(A, 2, 3)
    external = series.series(A, "EXTERNAL")
    external.push(close, 100, 110, 90, 105, 1)
    external.observe(close - minute, close + 5 * minute)  # five candles skipped after the close
    assert external.resume_hint()["resume_from"] == close + 5 * minute
    finished = {A: Finished("READY", close - 30 * minute, close, close)}
    hydrator = Hydrator(
        book=HydrationBook(),
        series=series,
        store=None,
        source=None,  # type: ignore[arg-type]
        now=lambda: close + 60 * minute + 7 * S,
        window_minutes=30,
        finished=finished,
    )
    assert hydrator.window(A) == (close, close + 60 * minute)
    # An empty series asks for the configured window back from the last whole minute.
    series.register(B, 2, 3)
    assert hydrator.window(B) == (close + 30 * minute, close + 60 * minute)


def test_a_series_that_never_finished_hydrating_asks_for_the_whole_window_though_it_holds_bars() -> None:
    """Issue 23: a node stopped before an instrument's hydration finished reloads its live
    bars; only a series that finished (READY, NO_HISTORY) may resume with the gap above them."""
    minute = 60 * S
    close = 29_000_000 * minute
    series = SeriesBook()
    series.register(A, 2, 3)
    series.series(A, "EXTERNAL").push(close, 100, 110, 90, 105, 1)
    hydrator = Hydrator(
        book=HydrationBook(),
        series=series,
        store=None,
        source=None,  # type: ignore[arg-type]
        now=lambda: close + 10 * minute,
        window_minutes=30,
    )
    assert hydrator.window(A) == (close - 20 * minute, close + 10 * minute)


class _Store:
    """The catalog's last durable close per bar type, as the hydrator reads it."""

    def __init__(self) -> None:
        self.last: dict[str, int] = {}

    def last_close(self, bar_type: str) -> int | None:
        return self.last.get(bar_type)


def test_a_finished_instrument_is_settled_only_once_its_history_is_durable(tmp_path: Path) -> None:
    minute = 60 * S
    store = _Store()
    hydrator = Hydrator(
        book=HydrationBook(),
        series=SeriesBook(),
        store=store,  # type: ignore[arg-type]
        source=None,
        now=lambda: 0,
        window_minutes=30,
    )  # type: ignore[arg-type]
    hydrator._finish(A, "READY", minute, 31 * minute, 30 * minute)
    hydrator._finish(B, "NO_HISTORY", minute, 31 * minute, None)
    assert set(hydrator.settled()) == {B}  # the answer's bars are still pending a flush
    store.last[f"{A}-1-MINUTE-LAST-EXTERNAL"] = 30 * minute
    assert set(hydrator.settled()) == {A, B}
    state = HydrationState(tmp_path)
    assert state.finished == {} and state.save(hydrator.settled())
    assert not state.save(hydrator.settled())  # unchanged: not written again
    assert HydrationState(tmp_path).finished == hydrator.settled()


def test_an_unreadable_hydration_state_hydrates_everything_in_full(tmp_path: Path) -> None:
    (tmp_path / "hydration.json").write_text("{not json")
    assert HydrationState(tmp_path).finished == {}
    (tmp_path / "hydration.json").write_text('{"version": 99, "instruments": {}}')
    assert HydrationState(tmp_path).finished == {}
