"""A series' sequences and observed spans survive a restart (``spine.node.persist.series_state``), and
``Series.resequence`` refuses numbers that cannot be the held bars'."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from spine._core import Series
from spine.errors import BarsError
from spine.node.persist import series_state
from spine.node.persist.series_book import SeriesBook

M = 60_000_000_000
BASE = 19_700 * 1_440 * M


def reloaded(series: Series) -> Series:
    """A fresh series with the same bars, bulk loaded as a restart loads them."""
    columns = series.columns()
    fresh = Series(channel=series.channel, price_precision=2, size_precision=0, capacity=5)
    ts = np.frombuffer(columns["ts_event"], "<u8").copy()
    fresh.extend(ts, *(np.frombuffer(columns[c], "<i8").copy() for c in ("open", "high", "low", "close", "volume")))
    return fresh


def test_a_restart_keeps_sequences_evictions_repairs_and_coverage(tmp_path: Path) -> None:
    book = SeriesBook(capacity=5)
    book.register("BTCUSDT.SIM", 2, 0)
    series = book.series("BTCUSDT.SIM", "EXTERNAL")
    series.observe(BASE, BASE + 20 * M)
    for minute in (1, 2, 3, 5, 6, 7, 8, 4):  # 4 arrives late (a repair); 1 and 2 are evicted
        series.push(BASE + minute * M, 1, 1, 1, 1, 1)
    assert series.last_sequence == 8 and len(series) == 5
    series_state.write(tmp_path, "EXTERNAL", series_state.snapshot(book, "EXTERNAL"))
    fresh = reloaded(series)
    assert fresh.page(limit=10) != series.page(limit=10)  # renumbered 1..5 without the state
    series_state.apply(fresh, series_state.load(tmp_path, "EXTERNAL")["BTCUSDT.SIM"])
    assert fresh.page(limit=10) == series.page(limit=10)
    assert fresh.coverage() == series.coverage() == [(BASE + 3 * M, BASE + 20 * M)]  # trimmed at evictions
    assert fresh.push(BASE + 9 * M, 1, 1, 1, 1, 1)[0] == "APPENDED" and fresh.last_sequence == 9


def test_a_bar_the_state_does_not_know_gets_a_number_above_every_saved_one(tmp_path: Path) -> None:
    book = SeriesBook(capacity=5)
    book.register("BTCUSDT.SIM", 2, 0)
    series = book.series("BTCUSDT.SIM", "INTERNAL")
    for minute in (1, 2, 3):
        series.push(BASE + minute * M, 1, 1, 1, 1, 1)
    saved = series_state.snapshot(book, "INTERNAL")["BTCUSDT.SIM"]
    series.push(BASE + 4 * M, 1, 1, 1, 1, 1)  # flushed to the catalog, state not written
    fresh = reloaded(series)
    series_state.apply(fresh, saved)
    rows, _ = fresh.page(limit=10, after_sequence=3)
    assert rows.count(b'"sequence":') == 1 and b'"sequence":5' in rows  # above every number used
    assert series_state.load(tmp_path, "INTERNAL") == {}  # no file: nothing to apply


def test_an_unreadable_state_file_is_ignored(tmp_path: Path) -> None:
    target = series_state.path(tmp_path, "EXTERNAL")
    target.parent.mkdir(parents=True)
    target.write_bytes(b"not an npz")
    assert series_state.load(tmp_path, "EXTERNAL") == {}


@pytest.mark.parametrize(
    ("sequence", "last", "words"),
    [
        ([1, 2], 3, "2 sequences for 3 held bars"),
        ([1, 2, 3], 2, "last sequence 2 is below the series' 3"),
        ([0, 2, 3], 3, "sequence 0 is outside 1..=3"),
        ([1, 2, 9], 5, "sequence 9 is outside 1..=5"),
        ([2, 2, 3], 3, "sequence 2 is given twice"),
    ],
)
def test_resequence_refuses_numbers_that_cannot_be_the_held_bars(sequence: list[int], last: int, words: str) -> None:
    series = Series(channel="INTERNAL", price_precision=2, size_precision=0)
    for minute in (1, 2, 3):
        series.push(BASE + minute * M, 1, 1, 1, 1, 1)
    before = series.page(limit=10)
    with pytest.raises(BarsError, match=f"INVALID_SEQUENCE: {words}"):
        series.resequence(np.array(sequence, np.uint64), last)
    assert series.page(limit=10) == before and series.last_sequence == 3


def test_a_skipped_candle_between_two_spans_is_one_gap() -> None:
    from spine.wire.projection import coverage_doc

    series = Series(channel="EXTERNAL", price_precision=2, size_precision=0)
    for minute in (1, 2, 3, 4, 5, 7, 8, 9, 10):  # bars alone prove their minutes: two spans
        series.push(BASE + minute * M, 1, 1, 1, 1, 1)
    assert len(series.coverage()) == 2
    document = coverage_doc(series, instrument_id="BTCUSDT.SIM", retention_state="unmanaged", exhausted=False)
    assert document["gaps"] == [{"start": str(BASE + 5 * M), "end": str(BASE + 6 * M), "resolved": False}]


def test_time_before_the_oldest_reloaded_bar_is_not_observed(tmp_path: Path) -> None:
    """The catalog may keep fewer bars than the series held: the saved spans are cut at the
    oldest reloaded bar's open, so the lost minutes read unobserved, never as false gaps."""
    book = SeriesBook(capacity=10)
    book.register("BTCUSDT.SIM", 2, 0)
    series = book.series("BTCUSDT.SIM", "EXTERNAL")
    series.observe(BASE, BASE + 10 * M)
    for minute in range(1, 11):
        series.push(BASE + minute * M, 1, 1, 1, 1, 1)
    saved = series_state.snapshot(book, "EXTERNAL")["BTCUSDT.SIM"]
    fresh = Series(channel="EXTERNAL", price_precision=2, size_precision=0, capacity=10)
    kept = np.arange(5, 11, dtype=np.uint64) * np.uint64(M) + np.uint64(BASE)  # the oldest four lost
    fresh.extend(kept, *(np.ones(6, np.int64),) * 5)
    series_state.apply(fresh, saved)
    assert fresh.coverage() == [(BASE + 4 * M, BASE + 10 * M)]
    assert fresh.fold("5m").withheld() == [(BASE, BASE + 5 * M, "UNOBSERVED")]
    assert b'"sequence":5,' in fresh.page(limit=1)[0]  # the oldest kept bar keeps its number
