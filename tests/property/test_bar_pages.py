"""Property tests: bar pages written by ``spine._core`` (``Series.page``, ``FoldResult.page``,
including bars served as imported through ``resolution_bars``) against a plain-Python page
built from the exported columns with ``decimal`` formatting."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import spine

M = 60 * 10**9


def _text(mantissa: int, scale: int) -> str:
    return format(Decimal(mantissa).scaleb(-scale), "f")


def reference_page(
    columns: dict[str, np.ndarray],
    price: int,
    size: int,
    start: int | None,
    end: int | None,
    after: int | None,
    offset: int,
    limit: int,
) -> tuple[list[dict[str, Any]], bool]:
    rows = []
    for k in range(len(columns["ts_event"])):
        ts, seq = int(columns["ts_event"][k]), int(columns["sequence"][k])
        if (start is not None and ts < start) or (end is not None and ts > end) or (after is not None and seq <= after):
            continue
        rows.append(
            {
                "sequence": seq,
                "ts_event": str(ts),
                **{f: _text(int(columns[f][k]), price) for f in ("open", "high", "low", "close")},
                "volume": _text(int(columns["volume"][k]), size),
            }
        )
    return rows[offset : offset + limit], len(rows) > offset + limit


def _columns(raw: dict[str, bytes]) -> dict[str, np.ndarray]:
    return {k: np.frombuffer(v, dtype="<u8" if k in ("ts_event", "sequence") else "<i8") for k, v in raw.items()}


@st.composite
def series_and_query(draw: st.DrawFn) -> tuple[Any, dict[str, Any]]:
    price, size = draw(st.integers(0, 18)), draw(st.integers(0, 18))
    series = spine.Series(
        channel=draw(st.sampled_from(["EXTERNAL", "INTERNAL"])),
        price_precision=price,
        size_precision=size,
        capacity=draw(st.integers(1, 300)),
    )
    rng = np.random.default_rng(draw(st.integers(0, 2**32)))
    n = draw(st.integers(0, 400))
    minutes = np.sort(rng.choice(np.arange(1, 2_000), size=n, replace=False)) if n else np.arange(0)
    rng.shuffle(minutes[: n // 4])  # some late arrivals: sequences stop following time
    big = draw(st.booleans())
    for m in minutes:
        low = int(rng.integers(-(2**62) if big else -(10**6), 2**62 if big else 10**6))
        spread = int(rng.integers(0, 2**20))
        series.push(
            int(m) * M, low, low + spread, low, low + spread // 2, int(rng.integers(0, 2**52 if big else 10**9))
        )
    return series, _query(draw, n, st.integers(0, 2_100).map(lambda k: k * M))


def _query(draw: st.DrawFn, n: int, bounds: st.SearchStrategy[int]) -> dict[str, Any]:
    """A page query over ``n`` bars: optional bounds from ``bounds``, cursor arguments around ``n``."""
    bound = st.one_of(st.none(), bounds)
    return {
        "start": draw(bound),
        "end": draw(bound),
        "after_sequence": draw(st.one_of(st.none(), st.integers(0, n))),
        "offset": draw(st.integers(0, n + 2)),
        "limit": draw(st.integers(1, n + 2)),
    }


def _expected(paged: Any, series: Any, q: dict[str, Any]) -> tuple[list[dict[str, Any]], bool]:
    """The reference's page of ``paged``'s bars at ``series``' precisions."""
    return reference_page(
        _columns(paged.columns()),
        series.price_precision,
        series.size_precision,
        q["start"],
        q["end"],
        q["after_sequence"],
        q["offset"],
        q["limit"],
    )


@given(series_and_query())
def test_series_page_matches_the_reference(case: tuple[Any, dict[str, Any]]) -> None:
    series, q = case
    rows, more = series.page(**q)
    assert (json.loads(rows), more) == _expected(series, series, q)


@given(series_and_query(), st.sampled_from(["5m", "15m", "1h", "4h", "1d"]))
def test_fold_page_matches_the_reference(case: tuple[Any, dict[str, Any]], resolution: str) -> None:
    series, q = case
    folded = series.fold(resolution)
    rows, more = folded.page(price_precision=series.price_precision, size_precision=series.size_precision, **q)
    assert (json.loads(rows), more) == _expected(folded, series, q)


@st.composite
def daily_bars_and_query(draw: st.DrawFn) -> tuple[dict[str, np.ndarray], int, int, dict[str, Any]]:
    """Bars closing on distinct midnights, as a daily import holds them, numbered 1..n."""
    n = draw(st.integers(0, 60))
    days = sorted(draw(st.lists(st.integers(1, 400), min_size=n, max_size=n, unique=True)))
    low = np.array(draw(st.lists(st.integers(-(10**12), 10**12), min_size=n, max_size=n)), dtype=np.int64)
    spread = np.array(draw(st.lists(st.integers(0, 10**9), min_size=n, max_size=n)), dtype=np.int64)
    columns = {
        "ts_event": np.array([d * 1_440 * M for d in days], dtype=np.uint64),
        "open": low + spread // 3,
        "high": low + spread,
        "low": low,
        "close": low + spread // 2,
        "volume": np.array(draw(st.lists(st.integers(0, 2**52), min_size=n, max_size=n)), dtype=np.int64),
        "sequence": np.arange(1, n + 1, dtype=np.uint64),
    }
    query = _query(draw, n, st.integers(0, 402).map(lambda d: d * 1_440 * M))
    return columns, draw(st.integers(0, 18)), draw(st.integers(0, 18)), query


@given(daily_bars_and_query())
def test_bars_served_as_imported_page_as_the_reference(case: tuple[Any, ...]) -> None:
    columns, price, size, q = case
    fields = ("ts_event", "open", "high", "low", "close", "volume")
    served = spine._core.resolution_bars(*(columns[f] for f in fields), resolution="1d", sequence=columns["sequence"])
    assert served.resolution == "1d" and len(served) == len(columns["ts_event"]) and served.withheld() == []
    rows, more = served.page(price_precision=price, size_precision=size, **q)
    expected = reference_page(columns, price, size, q["start"], q["end"], q["after_sequence"], q["offset"], q["limit"])
    assert (json.loads(rows), more) == expected


def test_bars_served_as_imported_are_checked_as_a_folds_input() -> None:
    day = 1_440 * M
    ts = np.array([2 * day, day], dtype=np.uint64)  # out of order
    prices = [np.array([5, 5], dtype=np.int64)] * 4
    volume = np.array([1, 1], dtype=np.int64)
    with pytest.raises(ValueError, match="UNSORTED_BARS: bar 1"):
        spine._core.resolution_bars(ts, *prices, volume, resolution="1d")
    with pytest.raises(ValueError, match="UNKNOWN_RESOLUTION"):
        spine._core.resolution_bars(ts[::-1].copy(), *prices, volume, resolution="1w")


def test_page_refuses_a_bad_precision() -> None:
    folded = spine.Series(channel="EXTERNAL", price_precision=2, size_precision=2).fold("1h")
    for bad in (-1, 19):
        try:
            folded.page(price_precision=bad, size_precision=2, limit=1)
        except ValueError as error:
            assert "scale" in str(error).lower()
        else:
            raise AssertionError(f"precision {bad} accepted")


@given(
    sequence=st.integers(0, 2**64 - 1),
    ts=st.integers(0, 2**64 - 1),
    ohlcv=st.lists(st.integers(-(2**63), 2**63 - 1), min_size=5, max_size=5),
    price=st.integers(0, 18),
    size=st.integers(0, 18),
)
def test_a_stream_row_is_the_reference_row(sequence: int, ts: int, ohlcv: list[int], price: int, size: int) -> None:
    """``bar_row`` (a stream event's ``bars``) writes the row a page writes, by the same writer."""
    columns = {
        "ts_event": np.array([ts], dtype="<u8"),
        "sequence": np.array([sequence], dtype="<u8"),
        **{
            f: np.array([v], dtype="<i8")
            for f, v in zip(("open", "high", "low", "close", "volume"), ohlcv, strict=True)
        },
    }
    rows, _ = reference_page(columns, price, size, None, None, None, 0, 1)
    written = spine._core.bar_row(sequence, ts, *ohlcv, price_precision=price, size_precision=size)
    assert json.loads(written) == rows
