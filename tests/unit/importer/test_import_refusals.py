"""Refusals name the row (and CSV line) and the value and say what is allowed; a refused
import writes nothing: the catalog directory is byte-for-byte unchanged, no staging left."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from import_cases import DAY, HEADER, T0, M, minute_rows, run, snapshot, write_csv

from spine.importer import ImportOptions, ImportRefused


def _refused(
    tmp_path: Path,
    rows: list[tuple[object, ...]],
    pattern: str,
    name: str = "btcusd.csv",
    header: list[str] = HEADER,
    **options: object,
) -> None:
    catalog = tmp_path / "catalog"
    run(tmp_path, write_csv(tmp_path / "seed.csv", minute_rows(3)), symbol="BTCUSD")  # a catalog to keep intact
    before = snapshot(catalog)
    with pytest.raises(ImportRefused, match=pattern):
        run(tmp_path, write_csv(tmp_path / name, rows, header), **options)
    assert snapshot(catalog) == before
    assert not [p for p in catalog.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize(
    ("minutes", "pattern"),
    [
        pytest.param(
            (9, 11, 10),
            r"^row 3 \(line 4\): close 2024-01-01T00:10:00Z is before 2024-01-01T00:11:00Z in "
            r"row 2 \(line 3\); allowed: strictly increasing",
            id="unsorted",
        ),
        pytest.param(
            (9, 9),
            r"^row 2 \(line 3\): close 2024-01-01T00:09:00Z is a duplicate of "
            r"2024-01-01T00:09:00Z in row 1 \(line 2\)",
            id="duplicate",
        ),
    ],
)
def test_out_of_order_timestamps_name_both_rows(tmp_path: Path, minutes: tuple[int, ...], pattern: str) -> None:
    rows = [(T0 + minute * M, "1", "1", "1", "1", "1") for minute in minutes]
    _refused(tmp_path, rows, pattern, name="eurusd.csv")


def test_order_is_checked_across_batches(tmp_path: Path) -> None:
    ts = [T0 + (k + 1) * M for k in range(70_000)]
    ts[65_536] = ts[65_535]  # the first row of the second batch repeats the last of the first
    n = len(ts)
    pq.write_table(
        pa.table(
            {
                "ts_event": pa.array(ts, pa.int64()),
                **{c: pa.array(["1"] * n) for c in ("open", "high", "low", "close", "volume")},
            }
        ),
        tmp_path / "x.parquet",
    )
    with pytest.raises(ImportRefused, match=r"^row 65537: close .* is a duplicate of .* in row 65536;"):
        run(tmp_path, tmp_path / "x.parquet")


@pytest.mark.parametrize(
    ("row", "shown"),
    [
        (("2", "1.5", "1", "2", "100"), "open 2.0, high 1.5, low 1.0, close 2.0"),
        (("2", "3", "2.5", "2", "100"), "open 2.0, high 3.0, low 2.5, close 2.0"),
    ],
)
def test_ohlc_inconsistency_refused(tmp_path: Path, row: tuple[str, ...], shown: str) -> None:
    rows = [(T0 + M, "1", "1", "1", "1", "1"), (T0 + 2 * M, *row)]
    _refused(
        tmp_path,
        rows,
        rf"^row 2 \(line 3\): {shown}; allowed: high >= max\(open, close\) and "
        r"low <= min\(open, close\)",
        name="ethusd.csv",
    )


def test_negative_volume_refused(tmp_path: Path) -> None:
    _refused(
        tmp_path,
        [(T0 + M, "1", "1", "1", "1", "-1")],
        r"^row 1 \(line 2\): volume -1; allowed: volume >= 0",
        name="ethusd.csv",
    )


def test_minute_grid_and_daily_closes(tmp_path: Path) -> None:
    _refused(
        tmp_path,
        [(T0 + M + 10**9, "1", "1", "1", "1", "1")],
        r"row 1 \(line 2\): close 2024-01-01T00:01:01Z is not on a whole minute",
        name="ethusd.csv",
    )
    _refused(
        tmp_path,
        [(T0 + DAY + M, "1", "1", "1", "1", "1")],
        r"close 2024-01-02T00:01:00Z is not on 00:00 UTC; allowed: 1d bars close on 00:00 UTC \(a file stamped "
        r"with each bar's open wants --open-time\)",
        name="ethusd.csv",
        step="1d",
    )


@pytest.mark.parametrize(
    ("value", "pattern"),
    [
        (1_704_067_260_000, r"reads as 1970-01-01T00:28:24.067260000Z in nanoseconds; it looks like milliseconds"),
        ("2024-13-01", r"timestamp '2024-13-01' is not a time; allowed: nanoseconds"),
        ("1969-12-31T23:59:00Z", r"is before 1970-01-01"),
    ],
)
def test_timestamps_refused(tmp_path: Path, value: object, pattern: str) -> None:
    _refused(tmp_path, [(value, "1", "1", "1", "1", "1")], rf"^row 1 \(line 2\): .*{pattern}", name="ethusd.csv")


@pytest.mark.parametrize(
    ("header", "pattern"),
    [
        (["ts_event", "open", "high", "low", "close"], r"missing volume; the header holds"),
        (["date", "time", "open", "high", "low", "close", "volume"], r"several timestamp columns \(time, date\)"),
        (["ts_event", "open", "OPEN", "high", "low", "close", "volume"], r"holds 'open' twice"),
    ],
)
def test_headers_refused(tmp_path: Path, header: list[str], pattern: str) -> None:
    _refused(tmp_path, [], pattern, name="ethusd.csv", header=header)


def test_names_refused() -> None:
    for kwargs, pattern in (
        ({"venue": "sim"}, r"--venue 'sim': allowed \^\[A-Z\]"),
        ({"venue": "X", "symbol": "btc/usd"}, r"--symbol 'btc/usd'"),
        ({"venue": "X", "file": Path("my data.csv")}, r"stem 'MY DATA' is not a symbol"),
        ({"venue": "X", "currency": "usd"}, r"--currency 'usd'"),
        ({"venue": "X", "step": "5m"}, r"--step '5m': allowed 1m, 1d"),
    ):
        with pytest.raises(ImportRefused, match=pattern):
            ImportOptions(**{"file": Path("x.csv"), **kwargs})  # type: ignore[arg-type]


def test_first_import_refused_leaves_no_directory(tmp_path: Path) -> None:
    with pytest.raises(ImportRefused, match="is a duplicate of"):
        run(tmp_path, write_csv(tmp_path / "btcusd.csv", [(T0 + M, "1", "1", "1", "1", "1")] * 2))
    assert not (tmp_path / "catalog").exists()


def test_empty_file_and_wrong_kind(tmp_path: Path) -> None:
    with pytest.raises(ImportRefused, match="no bars"):
        run(tmp_path, write_csv(tmp_path / "btcusd.csv", []))
    (tmp_path / "btcusd.json").write_text("{}")
    with pytest.raises(ImportRefused, match=r"allowed file kinds .csv, .csv.gz, .parquet, .pq"):
        run(tmp_path, tmp_path / "btcusd.json")
    assert not (tmp_path / "catalog").exists()
