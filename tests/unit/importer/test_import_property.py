"""Any valid bar set written as CSV text imports and reads back equal, as decimals, through
NautilusTrader and through polars."""

from __future__ import annotations

import tempfile
from decimal import Decimal
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from import_cases import T0, M, expected, polars_rows, run, stored, write_csv


@st.composite
def bar_sets(draw: st.DrawFn) -> tuple[list[tuple[object, ...]], int, int]:
    price_scale = draw(st.integers(0, 8))
    size_scale = draw(st.integers(0, 8))
    n = draw(st.integers(1, 30))
    gaps = draw(st.lists(st.integers(1, 5), min_size=n, max_size=n))
    if n > 1:  # two bars one minute apart somewhere, else the file is no 1-minute series (refused)
        gaps[draw(st.integers(1, n - 1))] = 1
    rows, ts = [], T0
    cents = st.integers(0, 10**12)
    for gap in gaps:
        ts += gap * M
        o, c = draw(cents), draw(cents)
        h = max(o, c) + draw(st.integers(0, 10**6))
        lo = max(0, min(o, c) - draw(st.integers(0, 10**6)))
        v = draw(st.integers(0, 10**12))
        rows.append(
            (
                ts,
                *(format(Decimal(x).scaleb(-price_scale), "f") for x in (o, h, lo, c)),
                format(Decimal(v).scaleb(-size_scale), "f"),
            )
        )
    return rows, price_scale, size_scale


@given(bar_sets())
def test_csv_import_reads_back_equal(case: tuple[list[tuple[object, ...]], int, int]) -> None:
    rows, _, _ = case
    with tempfile.TemporaryDirectory() as directory:
        tmp = Path(directory)
        summary = run(tmp, write_csv(tmp / "btcusdt.csv", rows), currency="USDT")
        root = tmp / "catalog" / "external"
        assert summary.bars == len(rows)
        assert stored(root, summary.bar_type) == expected(rows) == polars_rows(root, summary.bar_type)
