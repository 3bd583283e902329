"""Re-imports and the catalog: appending only newer bars (stored rows re-imported unchanged
are skipped, others refused with a pointer to --replace), --replace, daily bars beside the
minute bars, and a failure while placing files that puts everything back."""

from __future__ import annotations

from pathlib import Path

import pytest
from import_cases import DAY, T0, M, expected, minute_rows, run, snapshot, stored, write_csv
from nautilus_trader.persistence.catalog import ParquetDataCatalog

import spine.importer.catalog as catalog_module
from spine.importer import ImportRefused

BT = "BTCUSD.TEST-1-MINUTE-LAST-EXTERNAL"


def test_append_newer_only(tmp_path: Path) -> None:
    rows = minute_rows(30)
    root = tmp_path / "catalog" / "external"
    run(tmp_path, write_csv(tmp_path / "btcusd.csv", rows[:20]))
    summary = run(tmp_path, write_csv(tmp_path / "btcusd.csv", rows[20:]))
    assert (summary.bars, summary.skipped, summary.first_close) == (10, 0, T0 + 21 * M)
    assert stored(root, BT) == expected(rows)
    # The full history again, updated: stored rows are skipped, the new ones appended.
    more = minute_rows(35)
    summary = run(tmp_path, write_csv(tmp_path / "btcusd.csv", more))
    assert (summary.bars, summary.skipped) == (5, 30)
    assert stored(root, BT) == expected(more)
    # One file per bar type (a node consolidating several files would rewrite them from its series).
    assert len(list((root / "data" / "bar" / BT).glob("*.parquet"))) == 1


def test_overlap_that_differs_is_refused(tmp_path: Path) -> None:
    rows = minute_rows(10)
    run(tmp_path, write_csv(tmp_path / "btcusd.csv", rows))
    before = snapshot(tmp_path / "catalog")
    changed = [*rows[:5], (rows[5][0], "1", "1", "1", "1", "1"), *minute_rows(3, start=rows[-1][0] + M)]
    with pytest.raises(
        ImportRefused,
        match=r"^row 6 \(line 7\): close 2024-01-01T00:06:00Z is at or before "
        r"BTCUSD.TEST-1-MINUTE-LAST-EXTERNAL's last stored close "
        r"2024-01-01T00:10:00Z and differs from the stored bar .*--replace",
    ):
        run(tmp_path, write_csv(tmp_path / "btcusd.csv", changed))
    gap = [(T0 - 5 * M, "1", "1", "1", "1", "1"), *minute_rows(3, start=rows[-1][0] + M)]
    with pytest.raises(ImportRefused, match=r"^row 1 \(line 2\): close 2023-12-31T23:55:00Z .* has no stored bar"):
        run(tmp_path, write_csv(tmp_path / "btcusd.csv", gap))
    assert snapshot(tmp_path / "catalog") == before


def test_append_keeps_the_stored_precision(tmp_path: Path) -> None:
    run(tmp_path, write_csv(tmp_path / "btcusd.csv", [(T0 + M, "1.25", "1.25", "1.25", "1.25", "1")]))
    # Fewer decimals: parsed at the stored precision 2.
    summary = run(tmp_path, write_csv(tmp_path / "btcusd.csv", [(T0 + 2 * M, "1.5", "1.5", "1.5", "1.5", "1")]))
    assert summary.price_precision == 2
    with pytest.raises(
        ImportRefused,
        match=r"'1.125' is not exact at price precision 2 \(the stored BTCUSD.TEST "
        r"definition; --replace rewrites it\)",
    ):
        run(tmp_path, write_csv(tmp_path / "btcusd.csv", [(T0 + 3 * M, "1.125", "1.5", "1", "1.5", "1")]))
    with pytest.raises(ImportRefused, match=r"--price-precision 3: BTCUSD.TEST is stored at price precision 2"):
        run(tmp_path, write_csv(tmp_path / "btcusd.csv", [(T0 + 3 * M, "1", "1", "1", "1", "1")]), price_precision=3)
    with pytest.raises(
        ImportRefused,
        match=r"defined in .* as CurrencyPair BTC/USD; this import makes it an Equity "
        r"in USDT",
    ):
        run(tmp_path, write_csv(tmp_path / "btcusd.csv", [(T0 + 3 * M, "1", "1", "1", "1", "1")]), currency="USDT")


def test_replace_rewrites_the_bar_type_and_definition(tmp_path: Path) -> None:
    root = tmp_path / "catalog" / "external"
    run(tmp_path, write_csv(tmp_path / "btcusd.csv", minute_rows(20)))
    new = [(T0 + 5 * M, "2.125", "3", "2", "2.5", "7"), (T0 + 6 * M, "2.5", "2.5", "2.5", "2.5", "0")]
    summary = run(tmp_path, write_csv(tmp_path / "btcusd.csv", new), replace=True)
    assert summary.replaced and summary.bars == 2 and summary.price_precision == 3
    assert stored(root, BT) == expected(new)
    [instrument] = ParquetDataCatalog(str(root)).instruments(instrument_ids=["BTCUSD.TEST"])
    assert (instrument.price_precision, instrument.size_precision) == (3, 0)
    assert "replaced 2 bars" in summary.line()


def test_daily_bars_beside_minute_bars(tmp_path: Path) -> None:
    root = tmp_path / "catalog" / "external"
    run(tmp_path, write_csv(tmp_path / "btcusd.csv", minute_rows(3)))
    daily = [(T0 + DAY, "100", "101", "99", "100.5", "12"), (T0 + 2 * DAY, "100.5", "103", "100", "102", "8")]
    summary = run(tmp_path, write_csv(tmp_path / "btcusd.csv", daily), step="1d")
    assert summary.bar_type == "BTCUSD.TEST-1-DAY-LAST-EXTERNAL"
    assert stored(root, summary.bar_type) == expected(daily)
    assert stored(root, BT) == expected(minute_rows(3))
    # A replace that would change the precisions the minute bars are stored at is refused.
    with pytest.raises(ImportRefused, match=r"BTCUSD.TEST-1-MINUTE-LAST-EXTERNAL stay stored at"):
        run(
            tmp_path,
            write_csv(tmp_path / "btcusd.csv", [(T0 + DAY, "1.125", "2", "1", "1", "1")]),
            step="1d",
            replace=True,
        )
    # --open-time: daily bars stamped with their trading day.
    opened = [("2024-01-01", "100", "101", "99", "100.5", "12"), ("2024-01-02", "100.5", "103", "100", "102", "8")]
    run(
        tmp_path,
        write_csv(tmp_path / "eurusd.csv", opened, ["date", "open", "high", "low", "close", "volume"]),
        step="1d",
        open_time=True,
    )
    assert [r[0] for r in stored(root, "EURUSD.TEST-1-DAY-LAST-EXTERNAL")] == [T0 + DAY, T0 + 2 * DAY]


def test_failure_while_placing_puts_everything_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run(tmp_path, write_csv(tmp_path / "btcusd.csv", minute_rows(10)))
    before = snapshot(tmp_path / "catalog")
    real = catalog_module._move
    calls = []

    def failing(source: Path, target: Path, moved: list[tuple[Path, Path]]) -> None:
        calls.append(target)
        if len(calls) == 3:
            raise OSError("disk full")
        real(source, target, moved)

    monkeypatch.setattr(catalog_module, "_move", failing)
    with pytest.raises(OSError, match="disk full"):
        run(tmp_path, write_csv(tmp_path / "btcusd.csv", minute_rows(5, start=T0 + 5 * M)), replace=True)
    assert len(calls) == 3
    assert snapshot(tmp_path / "catalog") == before


def test_failure_while_appending_puts_everything_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run(tmp_path, write_csv(tmp_path / "btcusd.csv", minute_rows(10)))
    before = snapshot(tmp_path / "catalog")
    real = catalog_module._move

    def failing(source: Path, target: Path, moved: list[tuple[Path, Path]]) -> None:
        if target.is_relative_to(tmp_path / "catalog" / "external"):  # the new file going into place
            raise OSError("disk full")
        real(source, target, moved)

    monkeypatch.setattr(catalog_module, "_move", failing)
    with pytest.raises(OSError, match="disk full"):
        run(tmp_path, write_csv(tmp_path / "btcusd.csv", minute_rows(5, start=T0 + 11 * M)))
    assert snapshot(tmp_path / "catalog") == before


def test_a_concurrent_change_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run(tmp_path, write_csv(tmp_path / "btcusd.csv", minute_rows(10)))
    real = catalog_module.inspect
    calls = []

    def moved_meanwhile(root: Path, instrument_id: str, bar_type: str) -> catalog_module.Existing:
        calls.append(bar_type)
        found = real(root, instrument_id, bar_type)
        # The re-read under the lock sees a newer last close, as after another import.
        return found if len(calls) == 1 else catalog_module.Existing(found.instrument, T0 + 99 * M, [])

    monkeypatch.setattr(catalog_module, "inspect", moved_meanwhile)
    import spine.importer.service as run_module

    monkeypatch.setattr(run_module, "inspect", moved_meanwhile)
    before = snapshot(tmp_path / "catalog")
    with pytest.raises(
        ImportRefused,
        match=r"changed in .* while this import ran \(another import\?\); nothing was "
        r"written: run it again",
    ):
        run(tmp_path, write_csv(tmp_path / "btcusd.csv", minute_rows(12)))
    assert snapshot(tmp_path / "catalog") == before
