"""Round trips: CSV and Parquet (text, decimal128, integer and timestamp columns) into the
EXTERNAL root, read back by NautilusTrader and by polars, equal to the input as decimals."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from import_cases import DAY, T0, M, expected, minute_rows, polars_rows, run, stored, stored_text, write_csv
from nautilus_trader.persistence.catalog import ParquetDataCatalog

BT = "BTCUSD.TEST-1-MINUTE-LAST-EXTERNAL"


def test_csv_round_trip_is_exact(tmp_path: Path) -> None:
    rows = minute_rows(50)
    summary = run(tmp_path, write_csv(tmp_path / "btcusd.csv", rows))
    root = tmp_path / "catalog" / "external"
    assert (summary.instrument_id, summary.bar_type, summary.bars) == ("BTCUSD.TEST", BT, 50)
    assert (summary.first_close, summary.last_close) == (T0 + M, T0 + 50 * M)
    assert stored(root, BT) == expected(rows)
    assert polars_rows(root, BT) == expected(rows)
    [instrument] = ParquetDataCatalog(str(root)).instruments(instrument_ids=["BTCUSD.TEST"])
    assert type(instrument).__name__ == "CurrencyPair"
    assert (instrument.base_currency.code, instrument.quote_currency.code) == ("BTC", "USD")
    assert (instrument.price_precision, instrument.size_precision) == (summary.price_precision, summary.size_precision)
    assert "BTCUSD.TEST" in summary.line() and str(root.resolve()) in summary.line()


def test_iso_text_headers_and_open_time(tmp_path: Path) -> None:
    # ``time`` holds each bar's open here: the close is one minute later.
    rows = [
        ("2024-01-01T00:00:00Z", "1.5", "2", "1", "1.75", "10"),
        ("2024-01-01 00:01:00", "1.75", "1.75", "1.25", "1.5", "0"),
        ("2024-01-01T02:02:00+02:00", "1.5", "1.5", "1.5", "1.5", "3"),
    ]
    file = write_csv(tmp_path / "aapl.csv", rows, [" Time", "Open", "High", "Low", "Close", "Volume"])
    summary = run(tmp_path, file, open_time=True)
    got = stored(tmp_path / "catalog" / "external", "AAPL.TEST-1-MINUTE-LAST-EXTERNAL")
    assert [r[0] for r in got] == [T0 + M, T0 + 2 * M, T0 + 3 * M]
    assert summary.definition == "Equity in USD" and summary.size_precision == 0


def test_parquet_text_decimal_and_int_columns(tmp_path: Path) -> None:
    table = pa.table(
        {
            "timestamp": pa.array([T0 + M, T0 + 2 * M], pa.timestamp("ns", tz="UTC")),
            "open": pa.array([Decimal("10.10"), Decimal("10.20")], pa.decimal128(12, 2)),
            "high": pa.array(["10.5", "10.25"]),
            "low": pa.array([10, 10], pa.int64()),
            "close": pa.array([Decimal("10.20"), Decimal("10.25")], pa.decimal128(12, 2)),
            "volume": pa.array(["1.125", "0"]),
            "ignored": pa.array([1.5, 2.5]),
        }
    )
    pq.write_table(table, tmp_path / "ethusdt.parquet")
    summary = run(tmp_path, tmp_path / "ethusdt.parquet", currency="USDT")
    bt = "ETHUSDT.TEST-1-MINUTE-LAST-EXTERNAL"
    root = tmp_path / "catalog" / "external"
    want = expected(
        [(T0 + M, "10.10", "10.5", "10", "10.20", "1.125"), (T0 + 2 * M, "10.20", "10.25", "10", "10.25", "0")]
    )
    assert stored(root, bt) == want == polars_rows(root, bt)
    assert (summary.price_precision, summary.size_precision) == (2, 3)
    assert summary.definition == "CurrencyPair ETH/USDT"


def test_parquet_date_column_daily(tmp_path: Path) -> None:
    table = pa.table(
        {
            "date": pa.array([19724, 19725], pa.date32()),  # 2024-01-02, 2024-01-03
            "open": ["1"] * 2,
            "high": ["2"] * 2,
            "low": ["1"] * 2,
            "close": ["2"] * 2,
            "volume": ["5"] * 2,
        }
    )
    pq.write_table(table, tmp_path / "spy.parquet")
    summary = run(tmp_path, tmp_path / "spy.parquet", step="1d")
    assert summary.bar_type == "SPY.TEST-1-DAY-LAST-EXTERNAL"
    got = stored(tmp_path / "catalog" / "external", summary.bar_type)
    assert [r[0] for r in got] == [T0 + 2 * DAY, T0 + 3 * DAY]  # a date is that day's bar: its close is next midnight


def test_stored_text_keeps_the_precision(tmp_path: Path) -> None:
    run(tmp_path, write_csv(tmp_path / "btcusd.csv", [(T0 + M, "1.5", "1.5", "1.5", "1.5", "2")]), price_precision=4)
    assert stored_text(tmp_path / "catalog" / "external", BT) == [("1.5000", "1.5000", "1.5000", "1.5000", "2")]


def test_gzip_csv_with_a_byte_order_mark(tmp_path: Path) -> None:
    import gzip

    rows = minute_rows(5)
    text = "\ufeffts_event,open,high,low,close,volume\n" + "".join(",".join(map(str, r)) + "\n" for r in rows)
    with gzip.open(tmp_path / "btcusd.csv.gz", "wt", encoding="utf-8") as handle:
        handle.write(text)
    summary = run(tmp_path, tmp_path / "btcusd.csv.gz")
    assert summary.instrument_id == "BTCUSD.TEST"
    assert stored(tmp_path / "catalog" / "external", BT) == expected(rows)


def test_definition_kinds(tmp_path: Path) -> None:
    row = [(T0 + M, "1.5", "2", "1", "1.5", "3")]
    root = tmp_path / "catalog" / "external"
    pair = run(tmp_path, write_csv(tmp_path / "x.csv", row), symbol="BTC-EUR", currency="EUR")
    equity = run(tmp_path, write_csv(tmp_path / "x.csv", row), symbol="BRK.B")
    assert (pair.definition, equity.definition) == ("CurrencyPair BTC/EUR", "Equity in USD")
    catalog = ParquetDataCatalog(str(root))
    [btc] = catalog.instruments(instrument_ids=["BTC-EUR.TEST"])
    [brk] = catalog.instruments(instrument_ids=["BRK.B.TEST"])
    assert (btc.base_currency.code, btc.quote_currency.code, btc.size_precision) == ("BTC", "EUR", 0)
    assert (type(brk).__name__, brk.quote_currency.code, brk.price_precision) == ("Equity", "USD", 1)
