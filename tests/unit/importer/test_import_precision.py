"""Precisions: inferred from the decimals written, stated by a flag (exact values only),
float columns refused without a flag, accepted exactly with one, refused when inexact."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from import_cases import T0, M, run, stored, write_csv

from spine.importer import ImportOptions, ImportRefused

BT = "BTCUSD.TEST-1-MINUTE-LAST-EXTERNAL"


def _refused(tmp_path: Path, name: str, rows: list[tuple[object, ...]], pattern: str, **options: object) -> None:
    """Importing ``rows``, written as the CSV file ``name``, is refused with ``pattern``."""
    with pytest.raises(ImportRefused, match=pattern):
        run(tmp_path, write_csv(tmp_path / name, rows), **options)


def test_inferred_is_the_largest_scale_written(tmp_path: Path) -> None:
    rows = [(T0 + M, "1", "1.25", "1", "1.2", "3"), (T0 + 2 * M, "1.125", "1.5", "1.10", "1.5", "0.50")]
    summary = run(tmp_path, write_csv(tmp_path / "btcusd.csv", rows))
    assert (summary.price_precision, summary.size_precision) == (3, 2)


def test_stated_precision_accepts_exact_values_and_refuses_others(tmp_path: Path) -> None:
    rows = [(T0 + M, "1.500", "1.5", "1", "1.25", "1"), (T0 + 2 * M, "1", "1.5", "1", "1.255", "1")]
    pattern = r"row 2 \(line 3\): close '1.255' is not exact at price precision 2 \(--price-precision 2\)"
    _refused(tmp_path, "btcusd.csv", rows, pattern, price_precision=2)
    summary = run(tmp_path, write_csv(tmp_path / "btcusd.csv", rows[:1]), price_precision=2, size_precision=1)
    assert (summary.price_precision, summary.size_precision) == (2, 1)
    assert stored(tmp_path / "catalog" / "external", BT)[0][1] == Decimal("1.5")


def test_precision_limit_is_nautilus_fixed_precision() -> None:
    with pytest.raises(ImportRefused, match=r"--price-precision 17: allowed 0..16"):
        ImportOptions(file=Path("x.csv"), venue="TEST", price_precision=17)


@pytest.mark.parametrize("text", ["1e5", "+1", "1,5", "", "abc", "0x10"])
def test_non_decimal_text_refused(tmp_path: Path, text: str) -> None:
    rows = [(T0 + M, "1", "1", "1", "1", "1"), (T0 + 2 * M, "1", "1", "1", "1", text)]
    _refused(tmp_path, "btcusd.csv", rows, r"row 2 \(line 3\): volume .* is not a decimal number")


def _floats(path: Path, close: list[float], kind: pa.DataType | None = None) -> Path:
    kind = pa.float64() if kind is None else kind
    n = len(close)
    pq.write_table(
        pa.table(
            {
                "ts_event": pa.array([T0 + (k + 1) * M for k in range(n)], pa.uint64()),
                "open": pa.array(close, kind),
                "high": pa.array([c + 1 for c in close], kind),
                "low": pa.array([c - 1 for c in close], kind),
                "close": pa.array(close, kind),
                "volume": pa.array([1.5] * n, kind),
            }
        ),
        path,
    )
    return path


def test_float_columns_refused_without_a_precision(tmp_path: Path) -> None:
    file = _floats(tmp_path / "btcusd.parquet", [100.25, 100.5])
    with pytest.raises(
        ImportRefused,
        match=r"column open is double: floats are not exact decimal text.*"
        r"--price-precision N",
    ):
        run(tmp_path, file)
    with pytest.raises(ImportRefused, match=r"column volume is double.*--size-precision N"):
        run(tmp_path, file, price_precision=2)


def test_float_columns_accepted_exactly_with_a_precision(tmp_path: Path) -> None:
    file = _floats(tmp_path / "btcusd.parquet", [100.25, 0.1, 1e-2])
    summary = run(tmp_path, file, price_precision=2, size_precision=1)
    got = stored(tmp_path / "catalog" / "external", BT)
    assert [r[4] for r in got] == [Decimal("100.25"), Decimal("0.1"), Decimal("0.01")]
    assert (summary.price_precision, summary.size_precision) == (2, 1)


def test_float32_reads_as_its_own_shortest_text(tmp_path: Path) -> None:
    run(tmp_path, _floats(tmp_path / "btcusd.parquet", [0.1, 2.3], pa.float32()), price_precision=1, size_precision=1)
    assert [r[4] for r in stored(tmp_path / "catalog" / "external", BT)] == [Decimal("0.1"), Decimal("2.3")]


def test_inexact_float_refused_naming_the_row(tmp_path: Path) -> None:
    file = _floats(tmp_path / "btcusd.parquet", [100.25, 0.1 + 0.2])
    with pytest.raises(ImportRefused, match=r"^row 2: open '0.30000000000000004' is not exact at price precision 2"):
        run(tmp_path, file, price_precision=2, size_precision=1)
    with pytest.raises(ImportRefused, match=r"row 2: open 'nan' is not a decimal number"):
        run(tmp_path, _floats(tmp_path / "btcusd.parquet", [1.0, float(np.nan)]), price_precision=2, size_precision=1)


def test_equity_volume_must_be_whole(tmp_path: Path) -> None:
    rows = [(T0 + M, "1", "1", "1", "1", "10.0"), (T0 + 2 * M, "1", "1", "1", "1", "2.5")]
    pattern = r"row 2 \(line 3\): volume '2.5' is not exact at size precision 0 \(an Equity trades whole units"
    _refused(tmp_path, "aapl.csv", rows, pattern)
    _refused(tmp_path, "aapl.csv", rows, r"--size-precision 2: AAPL.TEST is an Equity in USD", size_precision=2)
    assert run(tmp_path, write_csv(tmp_path / "aapl.csv", rows[:1])).size_precision == 0


@pytest.mark.parametrize("close", ["110.00000000000001", "1." + "1" * 17, "0.123456789"])
def test_an_inferred_precision_above_8_is_refused_as_float_noise(tmp_path: Path, close: str) -> None:
    rows = [(T0 + M, "1", "1", "1", "1", "1"), (T0 + 2 * M, "1", "1", "1", close, "1")]
    decimals = len(close.partition(".")[2])
    noise = (
        rf"row 2 \(line 3\): close '{re.escape(close)}' writes {decimals} decimals; allowed: at most 8 without a "
        r"precision flag \(more is float noise such as 110.00000000000001\), or --price-precision N \(N at most 16\) "
        r"when the digits are real"
    )
    _refused(tmp_path, "btcusd.csv", rows, noise)
    volume = [(T0 + M, "1", "1", "1", "1", "0.000000001")]
    _refused(tmp_path, "btcusd.csv", volume, r"volume '0.000000001' writes 9 decimals; .* or --size-precision N")
    eight = [(T0 + M, "1", "1.2", "1", "1.12345678", "1")]
    assert run(tmp_path, write_csv(tmp_path / "sol.csv", eight)).price_precision == 8
    stated = [(T0 + M, "1", "1", "0.1", "0.123456789", "1")]
    assert run(tmp_path, write_csv(tmp_path / "eth.csv", stated), price_precision=9).price_precision == 9
    zeros = [(T0 + M, "1", "1", "1", "1." + "0" * 17, "1")]
    assert run(tmp_path, write_csv(tmp_path / "btcusd.csv", zeros), price_precision=4).price_precision == 4
