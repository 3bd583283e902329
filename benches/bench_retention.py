"""The node's catalog per instrument-month: a month (``SPINE_BENCH_RETENTION_DAYS``, default
30) of the simulated BTCUSDT.SIM venue candles written as the backfill writes them (a day per
file, ``CatalogStore.write_older``), against what a user would otherwise keep: the same bars as
CSV text and as a float Parquet table (pandas' layout). Disk bytes go to ``extra_info`` per
instrument-month; the timed cases are writing one day and reading the month back as a
backtest does (``minute_columns``: exact mantissas) against ``pandas.read_parquet`` of the float
table. Memory per instrument does not grow with the retention (the series keeps ``capacity``);
the reading case's peak allocation is reported beside it.

Smoke mode (CI): --benchmark-disable with SPINE_BENCH_RETENTION_DAYS=1.
"""

from __future__ import annotations

import io
import os
import tracemalloc
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest
from nautilus_trader.model.data import Bar, BarType
from nautilus_trader.model.objects import Price, Quantity
from pytest_benchmark.fixture import BenchmarkFixture

from spine.backtest.bars import minute_columns
from spine.node.persist.store import CatalogStore, Floors
from spine.node.sim.client import sim_market
from spine.node.sim.universe import SimUniverseConfig, make_instruments

DAYS = float(os.environ.get("SPINE_BENCH_RETENTION_DAYS", "30"))
MINUTE = 60 * 10**9
DAY = 1_440 * MINUTE
START = 29_000_000 * MINUTE
IID = "BTCUSDT.SIM"
BAR_TYPE = f"{IID}-1-MINUTE-LAST-EXTERNAL"
OPEN = Floors(min_free_inodes=0, max_files=10**9, min_free_bytes=0)
FIXED = 16


class _Config:
    seed, candle_skip = 7, 0.002


INSTRUMENTS = make_instruments(SimUniverseConfig(spot=1, perpetuals=0, option_expiries=0))


def _days() -> list[list[Bar]]:
    instruments = INSTRUMENTS
    instrument = instruments[0]
    market = sim_market(_Config(), instruments)  # type: ignore[arg-type]
    p, s = instrument.price_precision, instrument.size_precision
    bar_type = BarType.from_str(BAR_TYPE)

    def bar(c: Any) -> Bar:
        price = lambda m: Price.from_raw(m * 10 ** (FIXED - p), p)  # noqa: E731
        volume = Quantity.from_raw(c.volume * 10 ** (FIXED - s), s)
        return Bar(bar_type, price(c.open), price(c.high), price(c.low), price(c.close), volume, c.ts_event, c.ts_event)

    days = max(1, round(DAYS))
    return [[bar(c) for c in market.candles(0, START + d * DAY, START + (d + 1) * DAY)] for d in range(days)]


@pytest.fixture(scope="module")
def month(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    days = _days()
    root = tmp_path_factory.mktemp("retention") / "catalog" / "external"
    store = CatalogStore(root, floors=OPEN)
    for bars in reversed(days):  # newest first, as the backfill goes
        store.write_older(BAR_TYPE, bars)
    bars = [b for day in days for b in day]
    frame = pd.DataFrame(
        {
            "ts_event": [b.ts_event for b in bars],
            **{f: [float(getattr(b, f)) for b in bars] for f in ("open", "high", "low", "close", "volume")},
        }
    )
    float_file = root.parent / "float.parquet"
    frame.to_parquet(float_file)
    csv = io.StringIO()
    csv.write("ts_event,open,high,low,close,volume\n")
    for b in bars:
        csv.write(f"{b.ts_event},{b.open},{b.high},{b.low},{b.close},{b.volume}\n")
    scale = 30 / max(1, round(DAYS))
    catalog_bytes = sum(f.stat().st_size for f in (root / "data").rglob("*.parquet"))
    return {
        "store": store,
        "root": root,
        "bars": len(bars),
        "float_file": float_file,
        "sizes": {
            "catalog_bytes_per_instrument_month": round(catalog_bytes * scale),
            "csv_bytes_per_instrument_month": round(len(csv.getvalue().encode()) * scale),
            "float_parquet_bytes_per_instrument_month": round(float_file.stat().st_size * scale),
        },
        "day": days[-1],
    }


def _peak(call: Any) -> int:
    """The peak of Python allocations while ``call()`` runs (tracemalloc), in bytes."""
    tracemalloc.start()
    try:
        call()
        return int(tracemalloc.get_traced_memory()[1])
    finally:
        tracemalloc.stop()


def test_write_one_day_as_the_backfill_does(benchmark: BenchmarkFixture, month: dict[str, Any], tmp_path: Path) -> None:
    roots = iter(range(10**6))

    def write() -> int:
        store = CatalogStore(tmp_path / str(next(roots)), floors=OPEN)
        return store.write_older(BAR_TYPE, month["day"])

    assert benchmark(write) == len(month["day"])
    benchmark.extra_info["write_peak_bytes"] = _peak(write)
    benchmark.extra_info.update(month["sizes"])


def test_write_one_day_rival_float_parquet(benchmark: BenchmarkFixture, month: dict[str, Any], tmp_path: Path) -> None:
    day = month["day"]
    table = pa.table(
        {
            "ts_event": [b.ts_event for b in day],
            **{f: [float(getattr(b, f)) for b in day] for f in ("open", "high", "low", "close", "volume")},
        }
    )
    benchmark(pq.write_table, table, tmp_path / "day.parquet")
    benchmark.extra_info.update(month["sizes"])


def test_read_the_month_as_a_backtest_does(benchmark: BenchmarkFixture, month: dict[str, Any]) -> None:
    def read() -> int:
        p, s = INSTRUMENTS[0].price_precision, INSTRUMENTS[0].size_precision
        return len(minute_columns(month["root"], BAR_TYPE, p, s, None, None)["ts_event"])

    assert benchmark(read) == month["bars"]
    benchmark.extra_info["read_peak_bytes"] = _peak(read)
    benchmark.extra_info.update(month["sizes"])


def test_read_the_month_rival_pandas(benchmark: BenchmarkFixture, month: dict[str, Any]) -> None:
    def read() -> int:
        return len(pd.read_parquet(month["float_file"]))

    assert benchmark(read) == month["bars"]
    benchmark.extra_info["read_peak_bytes"] = _peak(read)
    benchmark.extra_info.update(month["sizes"])
