"""Bars: worked examples of the fold and the durable series, and every refusal.

Each example is computed by hand from the rules (pinned decision 6 and DESIGN.md "Gaps and
sparse series"): a 1-minute bar's ``ts_event`` is its close and it covers
``[ts_event - 1 min, ts_event)``; a derived bucket covers ``[k*S, (k+1)*S)`` on the UTC grid
and is labelled by its end. The random comparison against pandas, polars and the plain-Python
withholding rules lives in ``tests/property/test_fold_properties.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

import spine
from spine import BarsError

M = 60_000_000_000
H = 60 * M
DAY = 24 * H
D = 20_000 * DAY  # 2024-10-04 00:00 UTC
FIELDS = ("open", "high", "low", "close", "volume")


# Helpers.


def bars(closes: list[int]) -> dict[str, np.ndarray]:
    """Bars closing at ``closes`` (ns) with a pattern easy to fold by hand: the bar closing
    at minute k (counted from its own day) has open 100+k, high 110+k, low 90+k, close 105+k,
    volume k."""
    k = np.array([(t % DAY) // M for t in closes], dtype=np.int64)
    return {
        "ts_event": np.array(closes, dtype=np.uint64),
        "open": 100 + k,
        "high": 110 + k,
        "low": 90 + k,
        "close": 105 + k,
        "volume": k.copy(),
    }


def agg(first: int, last: int, minutes: list[int] | None = None) -> tuple[int, ...]:
    """The hand fold of the pattern above over day-minutes ``first..last`` (all present, or
    ``minutes`` when some are missing)."""
    ks = minutes if minutes is not None else list(range(first, last + 1))
    return (100 + ks[0], 110 + max(ks), 90 + min(ks), 105 + ks[-1], sum(ks))


def fold(
    data: dict[str, np.ndarray],
    resolution: str,
    channel: str = "EXTERNAL",
    coverage: list[tuple[int, int]] | None = None,
) -> tuple[dict[int, tuple[int, ...]], list[tuple[int, int, str]]]:
    """fold_bars on int mantissas; returns ({end: (o, h, l, c, v)}, [(start, end, reason)])."""
    table = spine.fold_bars(data, resolution, channel=channel, coverage=coverage, price_precision=0, size_precision=0)
    return split(table)


def split(table: pa.Table, scale: int = 0) -> tuple[dict[int, tuple[Any, ...]], list]:
    starts = table.column("start").cast(pa.int64()).to_pylist()
    ends = table.column("ts_event").cast(pa.int64()).to_pylist()
    reasons = table.column("withheld").to_pylist()
    values = [table.column(name).to_pylist() for name in FIELDS]
    served: dict[int, tuple[Any, ...]] = {}
    withheld = []
    for i, reason in enumerate(reasons):
        if reason is None:
            row = tuple(col[i] for col in values)
            served[ends[i]] = tuple(int(v) for v in row) if scale == 0 else row
        else:
            withheld.append((starts[i], ends[i], reason))
    return served, sorted(withheld)


def decode(result: Any) -> tuple[dict[int, tuple[int, ...]], list[tuple[int, int, str]]]:
    cols = result.columns()
    ends = np.frombuffer(cols["ts_event"], dtype="<u8").tolist()
    values = [np.frombuffer(cols[n], dtype="<i8").tolist() for n in FIELDS]
    values.append(np.frombuffer(cols["sequence"], dtype="<u8").tolist())
    return (
        {end: tuple(col[i] for col in values) for i, end in enumerate(ends)},
        [tuple(w) for w in result.withheld()],
    )


def minutes(first: int, last: int, base: int = D) -> list[int]:
    """Closes of the bars of day-minutes first..last (minute k closes at base + k min)."""
    return [base + k * M for k in range(first, last + 1)]


# Worked examples: the calendar grid.


def test_day_boundary_two_full_days_and_the_open_third() -> None:
    closes = [D + k * M for k in range(1, 2 * 1440 + 4)]  # 00:01 day 1 .. 00:03 day 3
    data = bars(closes)
    served, withheld = fold(data, "1d")
    # The bar closing at exactly 00:00 is the last minute of the day before (in the price
    # pattern its day-minute is 0: it closes the day with close 105 and the day's low 90).
    day1 = agg(0, 0, [*range(1, 1440), 0])
    assert served == {D + DAY: day1, D + 2 * DAY: day1}
    assert withheld == [(D + 2 * DAY, D + 3 * DAY, "NOT_CLOSED")]
    table = spine.fold_bars(data, "1d", price_precision=0, size_precision=0)
    starts = table.column("start").to_pylist()
    assert starts[0] == datetime(2024, 10, 4, tzinfo=UTC)
    assert all(s.hour == 0 and s.minute == 0 for s in starts)


def test_the_midnight_bar_closes_the_previous_day_internal_and_external() -> None:
    data = bars([D - M, D, D + M])  # 23:59, 00:00, 00:01
    coverage = [(D - DAY, D + DAY)]
    served, withheld = fold(data, "1d", "INTERNAL", coverage)
    assert served == {D: agg(0, 0, [1439, 0]), D + DAY: agg(1, 1)}
    assert withheld == []
    served, withheld = fold(data, "1d", "EXTERNAL", coverage)
    assert served == {}
    assert withheld == [(D - DAY, D + DAY, "GAP_IN_INPUT")]


def test_four_hour_boundary() -> None:
    data = bars([D + 239 * M, D + 240 * M, D + 241 * M, D + 479 * M])  # 03:59 04:00 04:01 07:59
    coverage = [(D, D + 8 * H)]
    served, withheld = fold(data, "4h", "INTERNAL", coverage)
    assert served == {D + 4 * H: agg(239, 240), D + 8 * H: agg(0, 0, [241, 479])}
    assert withheld == []
    served, withheld = fold(data, "1h", "INTERNAL", coverage)
    assert served == {
        D + 4 * H: agg(239, 240),
        D + 5 * H: agg(241, 241),
        D + 8 * H: agg(479, 479),
    }
    assert withheld == []  # quiet hours on INTERNAL: no bar, nothing withheld


def test_external_missing_candle_is_gap_in_input() -> None:
    data = bars(minutes(1, 6) + minutes(8, 15))  # the candle closing at 00:07 never came
    served, withheld = fold(data, "5m")
    assert served == {D + 5 * M: agg(1, 5), D + 15 * M: agg(11, 15)}
    assert withheld == [(D + 5 * M, D + 10 * M, "GAP_IN_INPUT")]
    served, withheld = fold(data, "15m")
    assert served == {}
    assert withheld == [(D, D + 15 * M, "GAP_IN_INPUT")]


def test_internal_quiet_bucket_yields_no_bar_and_is_not_withheld() -> None:
    data = bars(minutes(1, 5) + minutes(11, 15))  # 00:05..00:10 had no trade
    served, withheld = fold(data, "5m", "INTERNAL")
    assert served == {D + 5 * M: agg(1, 5), D + 15 * M: agg(11, 15)}
    assert withheld == []
    served, withheld = fold(data, "15m", "INTERNAL")
    assert served == {D + 15 * M: agg(0, 0, [1, 2, 3, 4, 5, 11, 12, 13, 14, 15])}
    assert withheld == []


@pytest.mark.parametrize("channel", ["EXTERNAL", "INTERNAL"])
def test_outage_is_one_unobserved_span(channel: str) -> None:
    # Observed 00:00-00:12 and 00:43-01:00; down in between (no bars then).
    data = bars(minutes(1, 12) + minutes(44, 60))
    coverage = [(D, D + 12 * M), (D + 43 * M, D + 60 * M)]
    served, withheld = fold(data, "5m", channel, coverage)
    assert served == {
        D + 5 * M: agg(1, 5),
        D + 10 * M: agg(6, 10),
        D + 50 * M: agg(46, 50),
        D + 55 * M: agg(51, 55),
        D + 60 * M: agg(56, 60),
    }
    # 00:10-00:15 and 00:40-00:45 are observed in part only: unobserved, merged into one span.
    assert withheld == [(D + 10 * M, D + 45 * M, "UNOBSERVED")]
    served, withheld = fold(data, "1h", channel, coverage)
    assert (served, withheld) == ({}, [(D, D + H, "UNOBSERVED")])


def test_long_outage_between_days_is_one_span() -> None:
    data = bars(minutes(1, 5) + minutes(1, 5, base=D + 3 * DAY))
    coverage = [(D, D + 5 * M), (D + 3 * DAY, D + 3 * DAY + 5 * M)]
    served, withheld = fold(data, "5m", "EXTERNAL", coverage)
    assert served == {D + 5 * M: agg(1, 5), D + 3 * DAY + 5 * M: agg(1, 5)}
    assert withheld == [(D + 5 * M, D + 3 * DAY, "UNOBSERVED")]


def test_the_open_bucket_is_not_closed() -> None:
    data = bars(minutes(1, 13))
    served, withheld = fold(data, "5m")
    assert served == {D + 5 * M: agg(1, 5), D + 10 * M: agg(6, 10)}
    assert withheld == [(D + 10 * M, D + 15 * M, "NOT_CLOSED")]
    # Observing the quiet minutes up to 00:15 closes it (on INTERNAL it is then a bar).
    served, withheld = fold(data, "5m", "INTERNAL", [(D, D + 15 * M)])
    assert served[D + 15 * M] == agg(11, 13)
    assert withheld == []


@pytest.mark.parametrize("channel", ["EXTERNAL", "INTERNAL"])
def test_bars_beyond_the_watermark_are_not_closed_even_across_a_hole(channel: str) -> None:
    """Regression: with stated coverage ending before the last bars, every bucket ending after
    the watermark is NOT_CLOSED (it takes precedence over UNOBSERVED), holes included."""
    data = bars(minutes(6, 10) + minutes(31, 32))
    served, withheld = fold(data, "5m", channel, [(D + 5 * M, D + 10 * M)])
    assert served == {D + 10 * M: agg(6, 10)}
    assert withheld == [(D + 10 * M, D + 35 * M, "NOT_CLOSED")]


def test_no_coverage_at_all_means_nothing_is_closed() -> None:
    data = bars(minutes(1, 10))
    served, withheld = fold(data, "5m", "INTERNAL", [])
    assert (served, withheld) == ({}, [(D, D + 10 * M, "NOT_CLOSED")])


@pytest.mark.parametrize(
    "span",
    [
        (D + 0.5, D + 10 * M),
        (np.float64(D), D + 10 * M),
        ("1", D + 10 * M),
        (True, D + 10 * M),
        (-5, D + 10 * M),
        (D, 2**64),
        (D,),
        7,
    ],
)
def test_a_coverage_span_of_anything_but_two_ns_integers_is_refused_not_rounded(span: Any) -> None:
    with pytest.raises(spine.BarsError, match="INVALID_BARS: .*coverage"):
        spine.fold_bars(bars(minutes(1, 10)), "5m", coverage=[span], price_precision=0, size_precision=0)


def test_numpy_integer_coverage_is_taken() -> None:
    data = bars(minutes(1, 10))
    served, _ = fold(data, "5m", "INTERNAL", [(np.uint64(D), np.int64(D + 10 * M))])
    assert served == {D + 5 * M: agg(1, 5), D + 10 * M: agg(6, 10)}


def test_coverage_is_rounded_inward_to_whole_minutes() -> None:
    data = bars(minutes(1, 10))
    # Observed from 00:00:00.000000001: minute 00:00 was only seen in part.
    served, withheld = fold(data, "5m", "INTERNAL", [(D + 1, D + 10 * M + M - 1)])
    assert served == {D + 10 * M: agg(6, 10)}
    assert withheld == [(D, D + 5 * M, "UNOBSERVED")]


def test_fold_bars_rows_are_sorted_by_resolution_as_given_then_time() -> None:
    """fold_bars' docstring: 'one table, sorted by resolution (as given) then time'."""
    data = bars(minutes(1, 7) + minutes(20, 30))
    table = spine.fold_bars(data, ["15m", "5m"], price_precision=0, size_precision=0)
    resolutions = table.column("resolution").to_pylist()
    assert resolutions == sorted(resolutions, key=["15m", "5m"].index)
    for resolution in ("5m", "15m"):
        rows = table.filter(pa.compute.equal(table.column("resolution"), resolution))
        starts = rows.column("start").cast(pa.int64()).to_pylist()
        assert starts == sorted(starts), f"{resolution} rows out of time order: {starts}"


# Exactness: decimal128 in and out.


def test_decimal128_input_and_output_are_exact() -> None:
    price = pa.decimal128(38, 8)
    size = pa.decimal128(38, 2)
    top = Decimal("92233720368.54775807")  # mantissa 2**63 - 1
    table = pa.table(
        {
            "ts_event": pa.array([D + M, D + 2 * M], pa.timestamp("ns", tz="UTC")),
            "open": pa.array([Decimal("1.00000001"), Decimal("2")], price),
            "high": pa.array([top, Decimal("3")], price),
            "low": pa.array([Decimal("0.00000001"), Decimal("1")], price),
            "close": pa.array([Decimal("5.5"), Decimal("2.12345678")], price),
            "volume": pa.array([Decimal("0.10"), Decimal("0.20")], size),
        }
    )
    out = spine.fold_bars(table, "5m", channel="INTERNAL", coverage=[(D, D + 5 * M)])
    assert out.schema.field("open").type == price
    assert out.schema.field("volume").type == size
    served, withheld = split(out, scale=8)
    assert withheld == []
    o, h, l_, c, v = served[D + 5 * M]
    assert (o, h, l_, c, v) == (
        Decimal("1.00000001"), top, Decimal("0.00000001"), Decimal("2.12345678"), Decimal("0.30")
    )  # fmt: skip
    assert (str(o), str(h), str(v)) == ("1.00000001", "92233720368.54775807", "0.30")
    # The same bars as int64 mantissas with explicit precisions fold to the same table.
    mantissas = {
        "ts_event": np.array([D + M, D + 2 * M], dtype=np.int64),
        "open": np.array([100000001, 200000000]),
        "high": np.array([2**63 - 1, 300000000]),
        "low": np.array([1, 100000000]),
        "close": np.array([550000000, 212345678]),
        "volume": np.array([10, 20]),
    }
    again = spine.fold_bars(
        mantissas, "5m", channel="INTERNAL", coverage=[(D, D + 5 * M)],
        price_precision=8, size_precision=2,
    )  # fmt: skip
    assert again.equals(out)


# The wire's form: decimal and nanosecond strings, as a /v2/bars page carries them.
WIRE_BARS = {
    "ts_event": [str(D + M), str(D + 2 * M), str(D + 3 * M)],
    "open": ["1.00000001", "2", "-0.5"],
    "high": ["92233720368.54775807", "3.1", "0"],
    "low": ["0.00000001", "1", "-1.25"],
    "close": ["5.5", "2.12345678", "-0.75"],
    "volume": ["0.10", "0.2", "7"],
}


def _decimal_reference() -> pa.Table:
    """WIRE_BARS as decimal128 columns built by the decimal module (independent parsing)."""
    columns: dict[str, Any] = {"ts_event": pa.array([int(t) for t in WIRE_BARS["ts_event"]], pa.int64())}
    for name in FIELDS:
        kind = pa.decimal128(38, 2 if name == "volume" else 8)
        columns[name] = pa.array([Decimal(v) for v in WIRE_BARS[name]], kind)
    return pa.table(columns)


@pytest.mark.parametrize("form", ["arrow string", "arrow large_string", "numpy str", "numpy object", "list"])
def test_decimal_and_nanosecond_strings_fold_like_decimal128(form: str) -> None:
    def column(values: list[str]) -> Any:
        return {
            "arrow string": lambda: pa.array(values, pa.string()),
            "arrow large_string": lambda: pa.array(values, pa.large_string()),
            "numpy str": lambda: np.array(values),
            "numpy object": lambda: np.array(values, dtype=object),
            "list": lambda: list(values),
        }[form]()

    wire = {name: column(values) for name, values in WIRE_BARS.items()}
    coverage = [(D, D + 5 * M)]
    out = spine.fold_bars(wire, "5m", channel="INTERNAL", coverage=coverage, price_precision=8, size_precision=2)
    assert out.equals(spine.fold_bars(_decimal_reference(), "5m", channel="INTERNAL", coverage=coverage))
    served, _ = split(out, scale=8)
    assert tuple(str(v) for v in served[D + 5 * M]) == (
        "1.00000001", "92233720368.54775807", "-1.25000000", "-0.75000000", "7.30")  # fmt: skip


@pytest.mark.parametrize(
    ("column", "bad", "says"),
    [
        ("open", "1.000000001", ["open", "row 1", "1.000000001"]),  # more digits than the precision
        ("close", "1e3", ["close", "row 1", "1e3"]),
        ("high", "-0", ["high", "row 1"]),
        ("volume", "0.123", ["volume", "row 1", "0.123"]),
        ("low", "92233720368.54775808", ["low", "row 1"]),  # mantissa past int64
        ("ts_event", "-60000000000", ["ts_event", "row 1"]),
        ("ts_event", "1.5", ["ts_event", "row 1"]),
        ("ts_event", "", ["ts_event", "row 1"]),
    ],
)
def test_a_bad_string_is_refused_naming_its_column_row_and_value(column: str, bad: str, says: list[str]) -> None:
    wire: dict[str, Any] = {name: list(values) for name, values in WIRE_BARS.items()}
    wire[column][1] = bad
    with pytest.raises(BarsError) as refused:
        spine.fold_bars(wire, "5m", price_precision=8, size_precision=2)
    assert all(part in str(refused.value) for part in says), str(refused.value)


def test_decimal_strings_need_the_precisions_and_every_row_a_string() -> None:
    with pytest.raises(BarsError, match="open holds decimal strings: pass price_precision"):
        spine.fold_bars(WIRE_BARS, "5m")
    mixed = dict(WIRE_BARS, close=np.array(["5.5", 2, "1"], dtype=object))
    with pytest.raises(BarsError, match="close: row 1: a int is not a decimal"):
        spine.fold_bars(mixed, "5m", price_precision=8, size_precision=2)
    nulls = dict(WIRE_BARS, open=pa.array(["1", None, "2"]))
    with pytest.raises(BarsError, match="open has nulls"):
        spine.fold_bars(nulls, "5m", price_precision=8, size_precision=2)


def test_volume_sums_are_exact_up_to_int64_and_refused_past_it() -> None:
    data = bars(minutes(1, 2))
    data["volume"] = np.array([2**62 - 1, 2**62], dtype=np.int64)
    served, _ = fold(data, "5m", "INTERNAL", [(D, D + 5 * M)])
    assert served[D + 5 * M][4] == 2**63 - 1
    data["volume"] = np.array([2**62, 2**62], dtype=np.int64)
    with pytest.raises(BarsError, match="VOLUME_OVERFLOW") as info:
        fold(data, "5m", "INTERNAL", [(D, D + 5 * M)])
    assert info.value.symbol == "VOLUME_OVERFLOW"


# The durable series.


def series(channel: str = "INTERNAL", capacity: int = 5000) -> spine.Series:
    return spine.Series(channel=channel, price_precision=2, size_precision=0, capacity=capacity)


def test_resume_hint_after_a_gap() -> None:
    s = series()
    assert s.resume_hint() == {"newest_ts_event": None, "newest_sequence": None, "resume_from": None}
    for t in minutes(1, 5):
        assert s.push(t, 10, 10, 10, 10, 1)[0] == "APPENDED"
    s.observe(D + 5 * M, D + 8 * M)  # quiet minutes, observed
    assert s.resume_hint() == {
        "newest_ts_event": D + 5 * M, "newest_sequence": 5, "resume_from": D + 8 * M
    }  # fmt: skip
    # Down from 00:08 to 00:20; the first bar after reconnecting closes at 00:21.
    assert s.push(D + 21 * M, 11, 11, 11, 11, 1)[0] == "APPENDED"
    assert s.coverage() == [(D, D + 8 * M), (D + 20 * M, D + 21 * M)]
    assert s.resume_hint() == {
        "newest_ts_event": D + 21 * M, "newest_sequence": 6, "resume_from": D + 21 * M
    }  # fmt: skip
    # Backfill into the gap does not move the hint: it is about the newest close.
    assert s.push(D + 12 * M, 9, 9, 9, 9, 1)[0] == "INSERTED"
    assert s.resume_hint()["newest_ts_event"] == D + 21 * M
    assert s.resume_hint()["newest_sequence"] == 6


def test_duplicates_first_close_wins_and_out_of_order_fills_an_empty_minute() -> None:
    s = series()
    assert s.push(D + 2 * M, 10, 12, 9, 11, 5) == ("APPENDED", [])
    assert s.push(D + 2 * M, 20, 22, 19, 21, 6) == ("DUPLICATE", [])
    assert s.push(D + 3 * M, 11, 11, 11, 11, 1) == ("APPENDED", [])
    assert s.push(D + M, 8, 8, 8, 8, 1) == ("INSERTED", [])
    assert s.push(D + M, 7, 7, 7, 7, 1) == ("DUPLICATE", [])
    cols = s.columns()
    assert np.frombuffer(cols["ts_event"], "<u8").tolist() == minutes(1, 3)
    assert np.frombuffer(cols["open"], "<i8").tolist() == [8, 10, 11]
    assert np.frombuffer(cols["sequence"], "<u8").tolist() == [3, 1, 2]
    assert s.last_sequence == 3
    assert s.counters() == {
        "accepted": 3, "duplicates": 2, "out_of_order": 1, "evicted": 0, "too_old": 0,
        "rejected": 0,
    }  # fmt: skip


def test_eviction_keeps_the_newest_and_forgets_coverage_before_the_evicted_close() -> None:
    s = series(capacity=3)
    s.observe(D, D + 10 * M)
    for t in minutes(1, 4):
        s.push(t, 1, 1, 1, 1, 1)
    assert len(s) == 3
    assert np.frombuffer(s.columns()["ts_event"], "<u8").tolist() == minutes(2, 4)
    assert s.coverage() == [(D + M, D + 10 * M)]  # the evicted bar closed at 00:01
    assert s.push(D + M, 1, 1, 1, 1, 1) == ("TOO_OLD", [])  # the evicted minute
    assert s.push(D + 5 * M, 1, 1, 1, 1, 1)[0] == "APPENDED"
    assert s.counters() == {
        "accepted": 5, "duplicates": 0, "out_of_order": 1, "evicted": 2, "too_old": 1,
        "rejected": 0,
    }  # fmt: skip
    assert s.coverage() == [(D + 2 * M, D + 10 * M)]


def test_series_fold_equals_the_offline_fold_of_its_columns() -> None:
    s = series("EXTERNAL")
    s.observe(D, D + 20 * M)
    for t in minutes(1, 13) + minutes(15, 20):
        s.push(t, 100, 110, 90, 105, 3)
    cols = s.columns()
    for resolution in ("5m", "15m"):
        offline = spine._core.fold_columns(
            np.frombuffer(cols["ts_event"], "<u8"),
            *(np.frombuffer(cols[n], "<i8") for n in FIELDS),
            resolution=resolution, channel="EXTERNAL", coverage=s.coverage(),
            sequence=np.frombuffer(cols["sequence"], "<u8"),
        )  # fmt: skip
        assert decode(s.fold(resolution)) == decode(offline)
    served, withheld = decode(s.fold("5m"))
    assert sorted(served) == [D + 5 * M, D + 10 * M, D + 20 * M]
    assert withheld == [(D + 10 * M, D + 15 * M, "GAP_IN_INPUT")]


def test_extend_bulk_loads_through_the_arrival_rule() -> None:
    s = series()
    s.push(D + 3 * M, 1, 1, 1, 1, 1)
    data = bars(minutes(1, 5))
    assert s.extend(*(data[n] for n in ("ts_event", *FIELDS))) == 4  # 00:03 is a duplicate
    assert s.counters()["duplicates"] == 1
    assert s.counters()["out_of_order"] == 2
    assert len(s) == 5


# The incremental fold.


def test_push_closes_buckets_and_advance_closes_quiet_ones() -> None:
    s = series("INTERNAL")
    s.observe(D, D + 5 * M)
    assert s.push(D + M, 10, 12, 9, 11, 2) == ("APPENDED", [])
    assert s.push(D + 2 * M, 11, 15, 11, 14, 3) == ("APPENDED", [])
    # 00:02-00:05 quiet: time alone closes the 5m bucket.
    assert s.advance(D + 5 * M) == [("5m", "bar", D, D + 5 * M, (10, 15, 9, 14, 5, 2))]
    assert s.advance(D + 5 * M) == []  # closed once


def test_the_midnight_bar_closes_every_resolution_at_once() -> None:
    s = series("EXTERNAL")
    closed: list[tuple[Any, ...]] = []
    for t in minutes(1, 1440, base=D - DAY):
        outcome, events = s.push(t, 100, 110, 90, 105, 1)
        assert outcome == "APPENDED"
        if t < D:
            closed.extend(events)
        last = events
    assert [e[0] for e in last] == ["5m", "15m", "30m", "1h", "4h", "1d"]
    assert all(e[1] == "bar" and e[3] == D for e in last)
    for resolution, _, start, end, bar in last + closed:
        assert end - start == {"5m": 5, "15m": 15, "30m": 30, "1h": 60, "4h": 240, "1d": 1440}[resolution] * M
        page, _ = decode(s.fold(resolution))
        assert page[end] == bar
    assert last[-1][4] == (100, 110, 90, 105, 1440, 1440)


def test_incremental_external_gap_is_withheld_when_the_bucket_closes() -> None:
    s = series("EXTERNAL")
    s.observe(D, D + 5 * M)
    for t in minutes(1, 3):
        s.push(t, 1, 1, 1, 1, 1)
    _, events = s.push(D + 5 * M, 1, 1, 1, 1, 1)  # 00:04 never came
    assert events == [("5m", "GAP_IN_INPUT", D, D + 5 * M, None)]


def test_incremental_fold_after_a_bulk_load_agrees_with_the_page() -> None:
    """Hydrate from history with extend, then go live with push: the bucket the live bar
    closes was mostly loaded in bulk, and the stream must agree with the page."""
    for channel in ("EXTERNAL", "INTERNAL"):
        s = series(channel)
        data = bars(minutes(1, 3))
        assert s.extend(*(data[n] for n in ("ts_event", *FIELDS))) == 3
        s.push(D + 4 * M, 104, 114, 94, 109, 4)
        _, events = s.push(D + 5 * M, 105, 115, 95, 110, 5)
        page, withheld = decode(s.fold("5m"))
        assert withheld == []
        assert events == [("5m", "bar", D, D + 5 * M, page[D + 5 * M])], channel


def test_incremental_fold_counts_an_out_of_order_bar_in_the_open_bucket() -> None:
    for channel in ("EXTERNAL", "INTERNAL"):
        s = series(channel)
        for k in (1, 2, 4, 3):  # 00:03 arrives after 00:04; the 5m bucket is still open
            s.push(D + k * M, 100 + k, 110 + k, 90 + k, 105 + k, k)
        _, events = s.push(D + 5 * M, 105, 115, 95, 110, 5)
        page, _ = decode(s.fold("5m"))
        assert page[D + 5 * M][:5] == agg(1, 5)
        assert events == [("5m", "bar", D, D + 5 * M, page[D + 5 * M])], channel


def test_a_late_bar_after_advance_does_not_emit_a_partial_bucket() -> None:
    """INTERNAL: the clock closes 00:00-00:05 (quiet 00:03-00:05), then the 00:04 bar arrives
    late. The stream must not later emit a bar for that bucket that disagrees with the page."""
    s = series("INTERNAL")
    s.observe(D, D + 3 * M)
    for k in (1, 2, 3):
        s.push(D + k * M, 10, 10, 10, 10, 1)
    s.observe(D + 3 * M, D + 5 * M)
    emitted = s.advance(D + 5 * M)
    _, late = s.push(D + 4 * M, 20, 20, 20, 20, 1)
    emitted += late
    s.observe(D + 5 * M, D + 10 * M)
    emitted += s.push(D + 6 * M, 30, 30, 30, 30, 1)[1]
    emitted += s.advance(D + 10 * M)
    page, _ = decode(s.fold("5m"))
    last = None
    for resolution, kind, _start, end, bar in emitted:
        if resolution == "5m" and kind == "bar" and end == D + 5 * M:
            last = bar
    assert last == page[D + 5 * M], f"stream emitted {emitted}, page has {page}"


# Refusals. Each names the problem; BarsError for refused values, TypeError for a buffer of
# the wrong type at the low level.


def good(n: int = 5) -> dict[str, np.ndarray]:
    return bars(minutes(1, n))


def via_fold_bars(data: dict[str, Any], **kw: Any) -> Any:
    kw.setdefault("price_precision", 2)
    kw.setdefault("size_precision", 0)
    return spine.fold_bars(data, "5m", **kw)


def via_fold_columns(data: dict[str, Any], **kw: Any) -> Any:
    kw.setdefault("resolution", "5m")
    kw.setdefault("channel", "EXTERNAL")
    ts = np.ascontiguousarray(data["ts_event"], dtype=np.uint64)
    return spine._core.fold_columns(ts, *(data[n] for n in FIELDS), **kw)


def via_extend(data: dict[str, Any], **kw: Any) -> Any:
    ts = np.ascontiguousarray(data["ts_event"], dtype=np.uint64)
    return series().extend(ts, *(data[n] for n in FIELDS))


ENTRY_POINTS = [via_fold_bars, via_fold_columns, via_extend]


def raises(call: Callable[[], Any], symbol: str, *words: str) -> BarsError:
    with pytest.raises(BarsError) as info:
        call()
    message = str(info.value)
    assert message.startswith(symbol + ":"), message
    assert info.value.symbol == symbol
    for word in words:
        assert word in message, (word, message)
    return info.value


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_unsorted_input_is_refused(entry: Callable[..., Any]) -> None:
    data = good()
    data["ts_event"] = data["ts_event"][[0, 2, 1, 3, 4]].copy()
    raises(lambda: entry(data), "UNSORTED_BARS", "bar 2", str(D + 2 * M), "strictly increasing")


@pytest.mark.parametrize("entry", [via_fold_bars, via_fold_columns])
def test_duplicate_ts_event_offline_is_refused(entry: Callable[..., Any]) -> None:
    data = good()
    data["ts_event"][3] = data["ts_event"][2]
    raises(lambda: entry(data), "UNSORTED_BARS", "bar 3", "no duplicates")


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_mismatched_lengths_are_refused(entry: Callable[..., Any]) -> None:
    data = good()
    data["volume"] = data["volume"][:-1].copy()
    raises(lambda: entry(data), "LENGTH_MISMATCH", "equal lengths", "ts_event has 5")


@pytest.mark.parametrize("entry", ENTRY_POINTS)
@pytest.mark.parametrize("ts", [D + 90 * 10**9, D + 1, 0])
def test_non_minute_ts_event_is_refused(entry: Callable[..., Any], ts: int) -> None:
    data = good()
    data["ts_event"] = np.array([ts, *data["ts_event"][1:].tolist()], dtype=np.uint64)
    raises(lambda: entry(data), "NOT_MINUTE_ALIGNED", "bar 0", str(ts), "whole minute")


def test_series_push_refuses_a_non_minute_bar_and_counts_it() -> None:
    s = series()
    raises(lambda: s.push(D + 30 * 10**9, 1, 1, 1, 1, 1), "NOT_MINUTE_ALIGNED", "whole minute")
    assert s.counters()["rejected"] == 1
    assert len(s) == 0


@pytest.mark.parametrize("entry", ENTRY_POINTS)
@pytest.mark.parametrize(("column", "value"), [("high", 50), ("low", 200), ("open", 10**6), ("close", 0)])
def test_inconsistent_ohlc_is_refused(entry: Callable[..., Any], column: str, value: int) -> None:
    data = good()
    data[column] = data[column].copy()
    data[column][1] = value
    raises(lambda: entry(data), "INCONSISTENT_BAR", "bar 1", "low <= open, close <= high")


def test_series_push_refuses_inconsistent_ohlc() -> None:
    s = series()
    raises(lambda: s.push(D + M, 10, 9, 8, 10, 1), "INCONSISTENT_BAR", "low <= open")
    raises(lambda: s.push(D + M, 10, 11, 8, 7, 1), "INCONSISTENT_BAR", "close <= high")
    assert s.counters()["rejected"] == 2


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_negative_volume_is_refused(entry: Callable[..., Any]) -> None:
    data = good()
    data["volume"] = data["volume"].copy()
    data["volume"][4] = -1
    raises(lambda: entry(data), "INCONSISTENT_BAR", "bar 4", "volume >= 0")
    raises(lambda: series().push(D + M, 1, 1, 1, 1, -5), "INCONSISTENT_BAR", "volume >= 0")


@pytest.mark.parametrize("column", [*FIELDS])
def test_float_columns_are_refused_by_fold_bars(column: str) -> None:
    data = good()
    data[column] = data[column].astype(np.float64)
    raises(lambda: via_fold_bars(data), "INVALID_BARS", column, "float64", "floats are refused")


def test_float_ts_event_is_refused_by_fold_bars() -> None:
    data = good()
    data["ts_event"] = data["ts_event"].astype(np.float64)
    raises(lambda: via_fold_bars(data), "INVALID_BARS", "ts_event", "integer nanoseconds")


@pytest.mark.parametrize("column", [*FIELDS])
@pytest.mark.parametrize("entry", [via_fold_columns, via_extend])
def test_float_buffers_are_a_type_error_at_the_low_level(entry: Callable[..., Any], column: str) -> None:
    data = good()
    data[column] = data[column].astype(np.float64)
    with pytest.raises(TypeError, match=f"{column} must be a 1-D array of int64"):
        entry(data)


def test_wrong_ts_buffer_type_is_a_type_error_at_the_low_level() -> None:
    data = good()
    with pytest.raises(TypeError, match="ts_event must be a 1-D array of uint64"):
        spine._core.fold_columns(
            data["ts_event"].astype(np.int64), *(data[n] for n in FIELDS),
            resolution="5m", channel="EXTERNAL",
        )  # fmt: skip
    with pytest.raises(TypeError, match="open must be a contiguous 1-D array of int64"):
        spine._core.fold_columns(
            data["ts_event"], np.arange(20, dtype=np.int64)[::4],
            *(data[n] for n in FIELDS[1:]), resolution="5m", channel="EXTERNAL",
        )  # fmt: skip


@pytest.mark.parametrize(
    ("kw", "named"),
    [({"price_precision": None}, "price_precision"), ({"size_precision": None}, "size_precision")],
)
def test_int_columns_need_precisions(kw: dict[str, Any], named: str) -> None:
    raises(lambda: via_fold_bars(good(), **kw), "INVALID_BARS", "integer mantissas", named)


@pytest.mark.parametrize("precision", [19, -1])
@pytest.mark.parametrize("which", ["price", "size"])
def test_bad_precision_is_refused_by_series(precision: int, which: str) -> None:
    kw = {"price_precision": 2, "size_precision": 0, f"{which}_precision": precision}
    raises(
        lambda: spine.Series(channel="EXTERNAL", **kw),
        "INVALID_PRECISION", f"{which} precision {precision}", "0..=18",
    )  # fmt: skip


@pytest.mark.parametrize("precision", [19, -1])
@pytest.mark.parametrize("which", ["price", "size"])
def test_bad_precision_is_refused_by_fold_bars(precision: int, which: str) -> None:
    kw = {f"{which}_precision": precision}
    with pytest.raises(BarsError) as info:
        table = via_fold_bars(good(), **kw)
        pytest.fail(f"{which}_precision={precision} accepted: {table.schema}")
    assert "precision" in str(info.value)
    assert str(precision) in str(info.value)


def test_decimal128_scale_beyond_18_is_refused() -> None:
    tiny = pa.array([Decimal("1E-19")] * 2, pa.decimal128(38, 19))
    data = {"ts_event": np.array([D + M, D + 2 * M]), **dict.fromkeys(FIELDS, tiny)}
    with pytest.raises(BarsError) as info:
        table = spine.fold_bars(data, "5m")
        pytest.fail(f"scale 19 accepted: {table.schema}")
    assert "19" in str(info.value)


@pytest.mark.parametrize("name", ["2h", "1w", "5M", "", "1H"])
def test_unknown_resolution_is_refused(name: str) -> None:
    words = ("UNKNOWN_RESOLUTION", f'"{name}"', "allowed: 1m, 5m, 15m, 30m, 1h, 4h, 1d")
    data = good()
    raises(lambda: spine.fold_bars(data, name, price_precision=0, size_precision=0), *words)
    raises(lambda: spine.fold_bars(data, ["5m", name], price_precision=0, size_precision=0), *words)
    raises(lambda: via_fold_columns(data, resolution=name), *words)
    raises(lambda: series().fold(name), *words)


def test_empty_resolution_list_is_refused() -> None:
    raises(
        lambda: spine.fold_bars(good(), [], price_precision=0, size_precision=0),
        "INVALID_BARS", "resolutions is empty",
    )  # fmt: skip


@pytest.mark.parametrize("name", ["external", "BOTH", ""])
def test_unknown_channel_is_refused(name: str) -> None:
    words = ("UNKNOWN_CHANNEL", f'"{name}"', "allowed: EXTERNAL, INTERNAL")
    raises(lambda: via_fold_bars(good(), channel=name), *words)
    raises(lambda: via_fold_columns(good(), channel=name), *words)
    raises(lambda: spine.Series(channel=name, price_precision=2, size_precision=0), *words)


@pytest.mark.parametrize("span", [(D + 5 * M, D + 5 * M), (D + 5 * M, D + 4 * M), (D + 1, D)])
def test_invalid_coverage_span_is_refused(span: tuple[int, int]) -> None:
    words = ("INVALID_COVERAGE", f"[{span[0]}, {span[1]})", "start < end")
    raises(lambda: via_fold_bars(good(), coverage=[(D, D + M), span]), *words)
    raises(lambda: via_fold_columns(good(), coverage=[span]), *words)
    raises(lambda: series().observe(*span), *words)


def test_invalid_capacity_is_refused() -> None:
    raises(lambda: series(capacity=0), "INVALID_CAPACITY", "got 0")


def test_decimal_price_columns_with_different_scales_are_refused() -> None:
    values = [Decimal("1.5"), Decimal("2.5")]
    data: dict[str, Any] = {
        "ts_event": np.array([D + M, D + 2 * M]),
        "open": pa.array(values, pa.decimal128(38, 2)),
        "high": pa.array(values, pa.decimal128(38, 2)),
        "low": pa.array(values, pa.decimal128(38, 3)),
        "close": pa.array(values, pa.decimal128(38, 2)),
        "volume": pa.array(values, pa.decimal128(38, 1)),
    }
    raises(lambda: spine.fold_bars(data, "5m"), "INVALID_BARS", "share one scale", "[2, 3]")


def test_decimal_mantissa_beyond_int64_is_refused() -> None:
    big = pa.array([Decimal("92233720368.54775808")] * 2, pa.decimal128(38, 8))
    data = {"ts_event": np.array([D + M, D + 2 * M]), **dict.fromkeys(FIELDS, big)}
    raises(lambda: spine.fold_bars(data, "5m"), "INVALID_BARS", "beyond a signed 64-bit")


@pytest.mark.parametrize("column", ["ts_event", *FIELDS])
def test_nulls_are_refused(column: str) -> None:
    table = pa.table(
        {
            "ts_event": pa.array([D + M, D + 2 * M], pa.timestamp("ns", tz="UTC")),
            **{n: pa.array([Decimal("1.0"), Decimal("1.0")], pa.decimal128(38, 1)) for n in FIELDS},
        }
    )
    index = table.column_names.index(column)
    holed = pa.array([table.column(column)[0].as_py(), None], table.schema.field(column).type)
    table = table.set_column(index, column, holed)
    raises(lambda: spine.fold_bars(table, "5m"), "INVALID_BARS", f"{column} has nulls")


def test_missing_column_and_wrong_time_unit_are_refused() -> None:
    data = good()
    del data["close"]
    raises(lambda: via_fold_bars(data), "INVALID_BARS", "missing column 'close'")
    micros = (good()["ts_event"] // 1000).astype(np.int64)
    table = pa.table({**good(), "ts_event": pa.array(micros, pa.timestamp("us"))})
    raises(lambda: via_fold_bars(table), "INVALID_BARS", "nanoseconds", "timestamp[us]")
    data = good()
    data["ts_event"] = data["ts_event"].astype(np.int64) * -1
    raises(lambda: via_fold_bars(data), "INVALID_BARS", "ts_event must not be negative")


def test_a_series_round_trips_through_an_arrow_record_batch() -> None:
    s = series("EXTERNAL")
    for k in (1, 2, 4, 3):
        s.push(D + k * M, 100 + k, 110 + k, 90 + k, 105 + k, k)
    batch = spine.series_batch(s)
    assert batch.schema.field("open").type == pa.decimal128(38, s.price_precision)
    assert batch.column("ts_event").cast(pa.int64()).to_pylist() == [D + k * M for k in (1, 2, 3, 4)]
    assert batch.column("sequence").to_pylist() == [1, 2, 4, 3]
    copy = series("EXTERNAL")
    assert spine.load_batch(copy, batch) == 4
    restored = spine.series_batch(copy)
    for name in ("ts_event", *FIELDS):
        assert restored.column(name).equals(batch.column(name)), name


def test_load_batch_refuses_a_decimal_at_another_scale() -> None:
    s = series("EXTERNAL")
    wrong = spine.series_batch(series("EXTERNAL")).to_pydict()
    batch = pa.RecordBatch.from_pydict(
        {
            "ts_event": pa.array([D + M], pa.timestamp("ns", tz="UTC")),
            **{name: pa.array([Decimal("1.5")], pa.decimal128(38, s.price_precision + 1)) for name in FIELDS},
        }
    )
    assert wrong["open"] == []
    with pytest.raises(BarsError, match="precision"):
        spine.load_batch(s, batch)
    assert len(s) == 0


@pytest.mark.parametrize(
    ("call", "allowed"),
    [
        (lambda: spine.Series(channel="EXTERNAL", price_precision=2**70, size_precision=0), "a precision"),
        (lambda: spine.Series(channel="EXTERNAL", price_precision=2, size_precision=0, capacity=-1), "a count"),
        (lambda: series().push(D + M, 2**63, 2**63, 1, 1, 1), "a mantissa"),
        (lambda: series().push(-M, 1, 1, 1, 1, 1), "a nanosecond timestamp"),
        (lambda: series().observe(-1, D), "a nanosecond timestamp"),
        (lambda: series().advance(2**64), "a nanosecond timestamp"),
        (lambda: series().page(limit=-1), "a count"),
        (lambda: series().page(start=10**400, limit=1), "a nanosecond timestamp"),
    ],
)
def test_an_int_out_of_its_range_is_a_bars_error_not_an_overflow(call: Any, allowed: str) -> None:
    with pytest.raises(BarsError, match=f"INVALID_INTEGER: .* is out of range; allowed: {allowed}") as caught:
        call()
    assert isinstance(caught.value, ValueError) and caught.value.symbol == "INVALID_INTEGER"


def test_a_non_int_argument_stays_a_type_error_naming_it() -> None:
    with pytest.raises(TypeError, match="argument 'open'"):
        series().push(D + M, 1.5, 1, 1, 1, 1)


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (
            lambda d: d | {"open": pa.array([str(x).encode() for x in d["open"]])},
            "open is an Arrow binary column; allowed: decimal128, decimal strings or integer mantissas",
        ),
        (lambda d: d | {"open": pa.array(d["open"] > 0)}, "open is an Arrow bool column"),
        (lambda d: d | {"ts_event": pa.array([float(x) for x in d["ts_event"]])}, "ts_event is an Arrow double column"),
        (lambda d: d | {"open": d["open"].reshape(1, -1)}, "open must be a 1-D column, got 2 dimensions"),
        (lambda d: {k: v[0] for k, v in d.items()}, "must be a 1-D column, got 0 dimensions"),
    ],
)
def test_columns_of_the_wrong_kind_are_refused_by_name(change: Callable[[Any], Any], words: str) -> None:
    with pytest.raises(spine.BarsError, match=words):
        spine.fold_bars(change(bars(minutes(1, 10))), "5m", price_precision=0, size_precision=0)


@pytest.mark.parametrize("precision", [2.9, True, "2"])
def test_a_precision_that_is_not_an_int_is_refused_not_truncated(precision: Any) -> None:
    with pytest.raises(spine.BarsError, match="precision .*; allowed: an int 0 to 18"):
        spine.fold_bars(bars(minutes(1, 10)), "5m", price_precision=precision, size_precision=0)


def test_a_precision_given_with_decimal_columns_must_be_their_scale() -> None:
    data = {
        k: (v if k == "ts_event" else pa.array([Decimal(int(x)) / 100 for x in v], pa.decimal128(38, 2)))
        for k, v in bars(minutes(1, 10)).items()
    }
    assert spine.fold_bars(data, "5m", price_precision=2, size_precision=2).num_rows == 2
    with pytest.raises(spine.BarsError, match=r"open is decimal128\(38, 2\) \(scale 2\) but precision 9 was given"):
        spine.fold_bars(data, "5m", price_precision=9)
