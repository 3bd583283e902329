"""Served row lists as data frames: bars, an equity curve and fills, in polars and in pandas,
hold exactly what a plain-Python reference (``decimal.Decimal``, ``int`` nanoseconds and a
``datetime`` in UTC) reads from the same decimal and timestamp strings; nanoseconds survive,
polars' decimal column takes the largest scale served, an empty list keeps the named columns
and an unknown backend is refused naming the allowed ones."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pandas as pd
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from spine.client import bars_frame, equity_frame, fills_frame, frame
from spine.client.frames import Backend

EXAMPLES = Path(__file__).resolve().parents[2] / "data" / "wire_examples"
BACKENDS: tuple[Backend, ...] = ("polars", "pandas")
BAR_DECIMALS = ("open", "high", "low", "close", "volume")
EQUITY_DECIMALS = ("balance", "equity")
FILL_DECIMALS = ("last_qty", "last_px", "commission")
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: A timestamp whose last three digits a microsecond datetime would lose.
NANOS = "1700000000123456789"


def example(schema_id: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((EXAMPLES / f"{schema_id}.json").read_text(encoding="utf-8"))
    return loaded


def bar_page() -> dict[str, Any]:
    """The committed bar envelope, its first bar closing at a nanosecond-precise time."""
    page = example("svc.bar_envelope")
    page["bars"][0]["ts_event"] = NANOS
    return page


def equity_page() -> dict[str, Any]:
    """An equity output page: the committed point, one with nanoseconds and a negative balance."""
    first = example("svc.equity_point")
    second = {**copy.deepcopy(first), "ts_event": NANOS, "balance": "-12.5", "equity": "0.000000000000000001"}
    return {"items": [first, second]}


def fill_page() -> dict[str, Any]:
    """The committed fills output page plus a second fill with nanoseconds and other scales."""
    page = example("svc.backtest_output_page")
    extra = {**copy.deepcopy(page["items"][0]), "trade_id": "SIM-T-000124", "ts_event": NANOS}
    extra |= {"last_qty": "12", "last_px": "36951.123456", "commission": "0"}
    page["items"].append(extra)
    return page


# --- the plain-Python reference -------------------------------------------------------------


def reference(rows: list[dict[str, Any]], decimals: tuple[str, ...]) -> list[dict[str, Any]]:
    """Each row as the reference reads it: a decimal column a ``Decimal``, ``ts_event`` a pair of
    its integer nanoseconds and a UTC ``datetime`` (to the microsecond), the rest as served."""
    out = []
    for row in rows:
        expected = dict(row)
        for name in decimals:
            expected[name] = Decimal(row[name])
        nanos = int(row["ts_event"])
        expected["ts_event"] = (nanos, EPOCH + timedelta(microseconds=nanos // 1_000))
        out.append(expected)
    return out


def scale_of(text: str) -> int:
    """The count of fractional digits of a decimal string."""
    return len(text.partition(".")[2])


def frame_rows(got: Any, backend: Backend) -> list[dict[str, Any]]:
    """A frame's rows in the reference's shape (``ts_event`` as nanoseconds and a datetime)."""
    if backend == "polars":
        assert got.schema["ts_event"] == pl.Datetime("ns", "UTC")
        nanos = got["ts_event"].dt.epoch("ns").to_list()
        rows: list[dict[str, Any]] = got.to_dicts()
        for row, n in zip(rows, nanos, strict=True):
            assert row["ts_event"].utcoffset() == timedelta(0)
            row["ts_event"] = (n, row["ts_event"].astimezone(UTC))
        return rows
    assert str(got["ts_event"].dtype) == "datetime64[ns, UTC]"
    records: list[dict[str, Any]] = got.to_dict("records")
    for row in records:
        stamp = row["ts_event"]
        # Timestamp.to_pydatetime warns when it drops nanoseconds; the reference drops them itself.
        micros = EPOCH + timedelta(microseconds=stamp.value // 1_000)
        row["ts_event"] = (stamp.value, micros)
    return records


def assert_matches(got: Any, backend: Backend, rows: list[dict[str, Any]], decimals: tuple[str, ...]) -> None:
    """``got`` holds exactly the reference's values: decimals exact (pandas keeps each served
    ``Decimal`` as written; polars' column takes the largest served scale), times in UTC."""
    expected = reference(rows, decimals)
    assert list(got.columns) == list(rows[0])
    actual = frame_rows(got, backend)
    assert actual == expected
    for name in decimals:
        values = got[name].to_list()
        assert all(isinstance(v, Decimal) for v in values)
        if backend == "polars":
            assert got.schema[name] == pl.Decimal(38, max(scale_of(row[name]) for row in rows))
        else:
            assert [format(v, "f") for v in values] == [row[name] for row in rows]


# --- the three frames, both backends --------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_bar_page_and_its_bars_give_the_reference_bars(backend: Backend) -> None:
    """The envelope and its ``bars`` list give the same frame: sequence, ts_event, OHLCV, exact."""
    page = bar_page()
    for given_rows in (page, page["bars"]):
        got = bars_frame(given_rows, backend=backend)
        assert_matches(got, backend, page["bars"], BAR_DECIMALS)
    assert frame_rows(bars_frame(page, backend=backend), backend)[0]["ts_event"][0] == int(NANOS)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_equity_page_gives_the_reference_points(backend: Backend) -> None:
    """Balance and equity exact (a negative one, an 18-digit fraction), timestamps to the ns."""
    page = equity_page()
    for given_rows in (page, page["items"]):
        assert_matches(equity_frame(given_rows, backend=backend), backend, page["items"], EQUITY_DECIMALS)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_fills_page_gives_the_reference_fills(backend: Backend) -> None:
    """Quantity, price and commission exact; every other served column unchanged."""
    page = fill_page()
    for given_rows in (page, page["items"]):
        assert_matches(fills_frame(given_rows, backend=backend), backend, page["items"], FILL_DECIMALS)


def test_polars_keeps_the_nanoseconds_a_python_datetime_would_drop() -> None:
    """1700000000123456789 ns reads back as itself, not as ...123456000."""
    got = equity_frame(equity_page(), backend="polars")
    assert got["ts_event"].dt.epoch("ns").to_list()[1] == 1_700_000_000_123_456_789
    assert got["ts_event"].dt.nanosecond().to_list()[1] == 123_456_789


def test_pandas_keeps_the_nanoseconds() -> None:
    got = equity_frame(equity_page(), backend="pandas")
    stamp = got["ts_event"][1]
    assert (stamp.value, stamp.nanosecond, str(stamp.tz)) == (1_700_000_000_123_456_789, 789, "UTC")


# --- property: any served decimal and timestamp survive -------------------------------------


@st.composite
def decimal_strings(draw: st.DrawFn) -> str:
    """A wire decimal: up to 20 integer and 18 fractional digits, either sign, no negative zero."""
    whole = draw(st.integers(0, 10**20 - 1))
    scale = draw(st.integers(0, 18))
    fraction = draw(st.integers(0, 10**scale - 1)) if scale else 0
    negative = draw(st.booleans()) and (whole or fraction)
    return ("-" if negative else "") + str(whole) + (f".{fraction:0{scale}d}" if scale else "")


NANOSECONDS = st.integers(0, 2**63 - 1).map(str)
EQUITY_ROWS = st.lists(
    st.fixed_dictionaries({"ts_event": NANOSECONDS, "balance": decimal_strings(), "equity": decimal_strings()}),
    min_size=1,
    max_size=8,
)


@given(rows=EQUITY_ROWS)
def test_any_decimal_and_timestamp_survive_both_backends_exactly(rows: list[dict[str, str]]) -> None:
    """For generated decimal strings (scales 0 to 18, negatives, 20 integer digits) and
    timestamps up to the int64 maximum, both frames hold exactly the reference's values."""
    for backend in BACKENDS:
        assert_matches(equity_frame(rows, backend=backend), backend, rows, EQUITY_DECIMALS)


# --- edges ----------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_empty_list_gives_an_empty_frame_with_the_named_columns(backend: Backend) -> None:
    """No rows: ts_event and the decimal columns, typed, and no row (bars given either way)."""
    for got in (bars_frame([], backend=backend), bars_frame({"bars": []}, backend=backend)):
        assert list(got.columns) == ["ts_event", *BAR_DECIMALS]
        assert len(got) == 0
    got = frame([], decimals=("price",), backend=backend)
    assert list(got.columns) == ["ts_event", "price"]
    if backend == "polars":
        assert got.schema["ts_event"] == pl.Datetime("ns", "UTC")
        assert isinstance(got.schema["price"], pl.Decimal)
    else:
        assert isinstance(got, pd.DataFrame)
        assert str(got["ts_event"].dtype) == "datetime64[ns, UTC]"


@pytest.mark.parametrize("rows", [[], example("svc.bar_envelope")["bars"]])
def test_an_unknown_backend_is_refused_naming_the_allowed_ones(rows: list[dict[str, Any]]) -> None:
    with pytest.raises(ValueError, match=r"backend 'arrow': allowed 'polars' or 'pandas'"):
        bars_frame(rows, backend="arrow")  # type: ignore[arg-type]


def test_polars_never_turns_a_served_decimal_into_null() -> None:
    """A value polars cannot hold at the column's scale is refused, never silently dropped."""
    rows = [
        {"ts_event": "1", "balance": "100000000000000000000", "equity": "0"},
        {"ts_event": "2", "balance": "0.000000000000000001", "equity": "0"},
    ]
    with pytest.raises(ValueError, match=r"balance: 100000000000000000000 does not fit a polars Decimal\(38, 18\)"):
        equity_frame(rows, backend="polars")
    assert equity_frame(rows, backend="pandas")["balance"].to_list() == [Decimal(row["balance"]) for row in rows]
