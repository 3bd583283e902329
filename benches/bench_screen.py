"""A screen over the universe's rows: INSTRUMENTS instruments x 7 resolutions (7,000 rows at
full size) of the default registry's 19 keys, values drawn at each key's scale with ~5%
ABSENT, evaluated with three conditions, a two-key sort and a top-50 rank.

- spine: ``ScreenTable.screen`` given the definition as JSON bytes (a POST body): compile
  against the registry, filter a column at a time, select the top 50, sort them, return
  ``(instrument_id, resolution, rank)`` tuples with the evaluated and matched counts;
- polars: the same filter, sort (nulls last, ties by instrument_id then resolution by
  duration) and head on a DataFrame already built from the same rows, values as Int64
  mantissas (exact, the fastest exact layout), literals pre-scaled to each column's grid, the
  ranked rows read back as Python tuples.

Both rivals return the same ranked rows and counts (checked before timing). Smoke mode (CI):
SPINE_BENCH_INSTRUMENTS=5 and --benchmark-disable.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import polars as pl
import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from benches.sizes import INSTRUMENTS
from spine import ScreenTable

RESOLUTIONS = ("1m", "5m", "15m", "30m", "1h", "4h", "1d")
LIMIT = 50
DEFINITION: dict[str, Any] = {
    "version": "spine.v2",
    "schema_id": "svc.screen_definition",
    "schema_version": 1,
    "resolutions": list(RESOLUTIONS),
    "instrument_ids": None,
    "filter": {
        "all": [
            {"key": "rsi_14.value", "op": "BETWEEN", "low": "30", "high": "70"},
            {"key": "vol_z_20.value", "op": "GT", "value": "0.5"},
            {"key": "trend_200.ratio", "op": "GT", "value": "-0.005"},
        ]
    },
    "sort": [{"key": "vol_z_20.value", "direction": "DESC"}, {"key": "rsi_14.value", "direction": "ASC"}],
    "limit": LIMIT,
    "as_of": None,
}
BODY = json.dumps(DEFINITION).encode()
KEYS: list[tuple[str, int]] = ScreenTable().keys
# Value ranges (in units) per key; the rest are price levels around 100.
RANGES = {
    "rsi_14.value": (0, 100),
    "vol_z_20.value": (-3, 3),
    "trend_200.ratio": (-0.05, 0.05),
    "trend_200.sign": (-1, 1),
    "bb_20_2.percent_b": (-0.5, 1.5),
    "roc_10.value": (-10, 10),
}


def _rows() -> tuple[list[str], list[str], dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Instrument ids, resolutions, mantissas per key and ABSENT masks, one entry per row."""
    rng = np.random.default_rng(7)
    n = INSTRUMENTS * len(RESOLUTIONS)
    ids = [f"SYM{k:04d}.SIM" for k in rng.permutation(INSTRUMENTS) for _ in RESOLUTIONS]
    resolutions = [r for _ in range(INSTRUMENTS) for r in RESOLUTIONS]
    values, absent = {}, {}
    for key, scale in KEYS:
        low, high = RANGES.get(key, (50, 150))
        values[key] = rng.integers(int(low * 10**scale), int(high * 10**scale) + 1, n, dtype=np.int64)
        absent[key] = rng.random(n) < 0.05
    return ids, resolutions, values, absent


IDS, ROW_RESOLUTIONS, VALUES, ABSENT = _rows()


def _text(mantissa: int, scale: int) -> str:
    if scale == 0:
        return str(mantissa)
    sign, digits = ("-" if mantissa < 0 else ""), str(abs(mantissa)).rjust(scale + 1, "0")
    return f"{sign}{digits[:-scale]}.{digits[-scale:]}"


def _table() -> ScreenTable:
    table = ScreenTable()
    for r, (instrument_id, resolution) in enumerate(zip(IDS, ROW_RESOLUTIONS, strict=True)):
        row = {}
        for key, scale in KEYS:
            if ABSENT[key][r]:
                row[key] = {"kind": "ABSENT", "reason": "WARMING_UP", "bars_seen": 1, "bars_needed": 20}
            elif scale == 0:
                row[key] = {"kind": "INTEGER", "value": str(int(VALUES[key][r]))}
            else:
                row[key] = {"kind": "DECIMAL", "value": _text(int(VALUES[key][r]), scale), "scale": scale}
        table.upsert(instrument_id, resolution, row)
    return table


def _frame() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "instrument_id": IDS,
            "resolution": ROW_RESOLUTIONS,
            "duration": [RESOLUTIONS.index(r) for r in ROW_RESOLUTIONS],
            **{key: pl.Series(key, VALUES[key]).scatter(np.flatnonzero(ABSENT[key]), None) for key, _ in KEYS},
        }
    )


TABLE = _table()
FRAME = _frame()
SCALE = dict(KEYS)


def _polars(frame: pl.DataFrame) -> tuple[list[tuple[str, str, int]], int, int]:
    rsi, vol, trend = pl.col("rsi_14.value"), pl.col("vol_z_20.value"), pl.col("trend_200.ratio")
    grid = {key: 10 ** SCALE[key] for key in ("rsi_14.value", "vol_z_20.value", "trend_200.ratio")}
    matched = frame.filter(
        rsi.is_between(30 * grid["rsi_14.value"], 70 * grid["rsi_14.value"])
        & (vol > grid["vol_z_20.value"] // 2)
        & (trend > -5 * grid["trend_200.ratio"] // 1000)
    )
    top = matched.sort(
        ["vol_z_20.value", "rsi_14.value", "instrument_id", "duration"],
        descending=[True, False, False, False],
        nulls_last=True,
    ).head(LIMIT)
    rows = [(i, r, n + 1) for n, (i, r) in enumerate(top.select("instrument_id", "resolution").iter_rows())]
    return rows, frame.height, matched.height


def _spine(table: ScreenTable) -> tuple[list[tuple[str, str, int]], int, int]:
    return table.screen(BODY)


def test_rivals_rank_the_same_rows() -> None:
    spine, polars = _spine(TABLE), _polars(FRAME)
    assert spine == polars
    assert spine[1] == INSTRUMENTS * 7 and 0 < spine[2] < spine[1]
    assert len(spine[0]) == min(LIMIT, spine[2])


@pytest.mark.benchmark(group="screen-7000-rows")
@pytest.mark.parametrize("rival", ["spine", "polars"])
def test_screen(benchmark: BenchmarkFixture, rival: str) -> None:
    if rival == "spine":
        benchmark(_spine, TABLE)
    else:
        benchmark(_polars, FRAME)
