"""Backtest throughput (bars per second) of the EMA-cross template at its defaults (fast 10,
slow 30, LONG_ONLY, quantity 0.1) over 100,000 one-minute bars of one instrument
(``SPINE_BENCH_BACKTEST_BARS``), side by side:

- spine: ``spine.backtest.run_backtest`` end to end: the catalog read as exact columns, the
  fold, the framework bars, the engine with the one declarative runtime strategy
  (``StrategyKernel`` per bar), and every output document and identity;
- hand-written: the same strategy written by hand as a plain framework Strategy
  (``tests/reference/ema_cross_nautilus.py``, its EMAs in plain Python) on a raw
  ``BacktestEngine`` fed ``ParquetDataCatalog.bars()``, with the same venue configuration and
  the framework's defaults otherwise (its post-run analysis included), reading back its fills.

Both runs are checked to give the same orders and fills before timing (an EMA cross of 10/30
trades often: the framework's order round trips dominate both). Throughput is bars / median.
Target (issue 27): spine at least 0.9x the hand-written throughput.
Smoke mode (CI): SPINE_BENCH_BACKTEST_BARS=2000 and --benchmark-disable.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

ROOT = Path(__file__).resolve().parents[2]
# The hand-written rival and the catalog writer are the tests' oracles (tests/reference, which
# never imports spine): one definition for the test that checks equality and for this bench.
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "unit" / "backtest"))

from backtest_support import hand_run, node_catalog, run_spec, template_plan  # noqa: E402

from spine.backtest import run_backtest  # noqa: E402

BARS = int(os.environ.get("SPINE_BENCH_BACKTEST_BARS", "100000"))
FAST, SLOW, DIRECTION, QUANTITY = 10, 30, "LONG_ONLY", "0.1"
RIVALS = ["spine", "hand-written"]


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return node_catalog(tmp_path_factory.mktemp("bench-node"), bars=BARS)


def _spine(catalog: Path) -> list[tuple[str, str, str]]:
    plan = template_plan()
    out = run_backtest(plan, run_spec(plan), [catalog], cancelled=lambda: False, log=lambda level, message: None)

    return [(f["side"], f["last_px"], f["ts_event"]) for f in map(json.loads, out.fills)]


def _hand(catalog: Path) -> list[tuple[str, str, str]]:
    fills = hand_run(catalog, FAST, SLOW, DIRECTION, quantity=QUANTITY)["fills"]
    return [("BUY" if side == 1 else "SELL", px, ts) for side, px, _, _, ts in fills]


RUNS: dict[str, Callable[[Path], list[tuple[str, str, str]]]] = {"spine": _spine, "hand-written": _hand}


def test_rivals_agree(catalog: Path) -> None:
    fills = _spine(catalog)
    assert fills and fills == _hand(catalog)


@pytest.mark.parametrize("rival", RIVALS)
def test_backtest_throughput(benchmark: BenchmarkFixture, catalog: Path, rival: str) -> None:
    benchmark.group = f"backtest EMA cross {FAST}/{SLOW}, {BARS} one-minute bars"
    benchmark.extra_info["bars"] = BARS
    result: Any = benchmark.pedantic(RUNS[rival], args=(catalog,), rounds=3, iterations=1, warmup_rounds=0)
    assert result
    if benchmark.stats is not None:
        benchmark.extra_info["bars_per_second"] = BARS / benchmark.stats.stats.median
