"""Daily imports read as their dates say, and rows whose spacing does not fit the step are
refused: a date without a time (``2004-08-19``, what pandas and backtesting.py write) or a
date column is that day's bar, closing at the next midnight, with or without ``--open-time``;
a yfinance stamp at local midnight (``2004-08-19 00:00:00-04:00``) is its local date's bar; a
full UTC timestamp stays the close. A file whose closest rows are further apart than the step
(2,148 daily rows without ``--step 1d``, 5-minute bars as 1-minute ones) is refused naming the
row and the step that fits; and exponents get one message wherever they are."""

from __future__ import annotations

from pathlib import Path

import pytest
from import_cases import DAY, T0, M, run, stored, write_csv

from spine.importer import ImportRefused

DAYS = ("2024-01-02", "2024-01-03", "2024-01-05")
JAN_2 = T0 + DAY


def daily(stamps: tuple[str, ...] | list[str]) -> list[tuple[str, ...]]:
    return [(stamp, "10", "11", "9", "10.5", "100") for stamp in stamps]


def closes(tmp_path: Path, bar_type: str) -> list[int]:
    return [row[0] for row in stored(tmp_path / "catalog" / "external", bar_type)]


@pytest.mark.parametrize("open_time", [False, True])
def test_a_date_is_that_days_bar(tmp_path: Path, open_time: bool) -> None:
    summary = run(tmp_path, write_csv(tmp_path / "spy.csv", daily(DAYS)), step="1d", open_time=open_time)
    assert closes(tmp_path, summary.bar_type) == [JAN_2 + DAY, JAN_2 + 2 * DAY, JAN_2 + 4 * DAY]


def test_a_local_midnight_is_its_local_dates_bar(tmp_path: Path) -> None:
    stamps = [f"{day} 00:00:00-05:00" for day in DAYS]
    summary = run(tmp_path, write_csv(tmp_path / "spy.csv", daily(stamps)), step="1d")
    assert closes(tmp_path, summary.bar_type) == [JAN_2 + DAY, JAN_2 + 2 * DAY, JAN_2 + 4 * DAY]


def test_a_utc_timestamp_stays_the_close(tmp_path: Path) -> None:
    stamps = [f"{day}T00:00:00Z" for day in DAYS]
    summary = run(tmp_path, write_csv(tmp_path / "spy.csv", daily(stamps)), step="1d")
    assert closes(tmp_path, summary.bar_type) == [JAN_2, JAN_2 + DAY, JAN_2 + 3 * DAY]


def test_daily_rows_are_refused_as_minute_bars_with_the_step_that_fits(tmp_path: Path) -> None:
    with pytest.raises(ImportRefused) as refused:
        run(tmp_path, write_csv(tmp_path / "spy.csv", daily(DAYS)))
    assert str(refused.value) == (
        "row 2 (line 3): the closest bars are 1 day apart (its close and the one before it); "
        "allowed: 1m bars, 1 minute apart at least once: give --step 1d"
    )
    assert not (tmp_path / "catalog").exists()


def test_five_minute_rows_are_refused_as_minute_bars(tmp_path: Path) -> None:
    rows = [(T0 + k * 5 * M, "10", "11", "9", "10.5", "1") for k in range(1, 5)]
    with pytest.raises(ImportRefused, match=r"the closest bars are 5 minutes apart .* resample them to 1m bars"):
        run(tmp_path, write_csv(tmp_path / "x.csv", rows))


def test_minute_rows_are_refused_as_daily_bars(tmp_path: Path) -> None:
    rows = [(T0 + DAY * 2, "10", "11", "9", "10.5", "1"), (T0 + DAY * 2 + M, "10", "11", "9", "10.5", "1")]
    with pytest.raises(ImportRefused, match=r"not on 00:00 UTC"):
        run(tmp_path, write_csv(tmp_path / "x.csv", rows), step="1d")


def test_one_row_or_rows_one_step_apart_somewhere_are_accepted(tmp_path: Path) -> None:
    assert run(tmp_path, write_csv(tmp_path / "a.csv", daily(DAYS[:1])), step="1d").bars == 1
    rows = [(T0 + k * M, "10", "11", "9", "10.5", "1") for k in (1, 2, 30, 90)]  # gaps, yet a 1m series
    assert run(tmp_path, write_csv(tmp_path / "b.csv", rows)).bars == 4


@pytest.mark.parametrize("column", ["open", "volume"])
@pytest.mark.parametrize("value", ["1e-05", "1.5E3", "2.5e+2"])
@pytest.mark.parametrize("flag", [{}, {"price_precision": 6, "size_precision": 6}])
def test_an_exponent_gets_one_message(tmp_path: Path, column: str, value: str, flag: dict[str, int]) -> None:
    cells = {"open": "10", "volume": "1"} | {column: value}
    rows = [(T0 + M, cells["open"], "3000", "0.00001", "10", cells["volume"])]
    with pytest.raises(ImportRefused) as refused:
        run(tmp_path, write_csv(tmp_path / "btcusd.csv", rows), **flag)
    assert str(refused.value) == (
        f"row 1 (line 2): {column} {value!r} is not a decimal number; allowed: plain decimal text such as "
        "123.45 (no exponent, no '+', no thousands separator)"
    )
