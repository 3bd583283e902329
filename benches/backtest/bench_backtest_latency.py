"""A backtest's latency on a warm stack, through real processes on loopback: a ``spine
gateway`` (private-operator, SQLite) and one ``spine worker`` with the real runner over
backtesting.py's bundled GOOG daily bars (2,148 rows) loaded by ``spine import``.

- Timed: from ``POST /v2/backtests`` of the EMA-cross template on GOOG at 1d (10 shares) to
  the job COMPLETED (polled every 5 ms). Each round starts once the worker's next standby
  process has had time to import the framework (the job finds it warm). Target (issue 36):
  under 1 s median. Kept beside it, from the job's events: the queue wait (submit to the
  RUNNING event), the run (RUNNING to COMPLETED), the engine's own seconds (its LOG line) and
  what the job costs around the engine (the run less the engine).
- Rival: backtesting.py running an SMA cross over the same rows in-process.

Smoke mode (CI): --benchmark-disable.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from nodes import get, post  # noqa: E402

from benches.backtest.stacks import stack  # noqa: E402

backtesting = pytest.importorskip("backtesting", reason="backtesting.py is a test dependency (pyproject [test])")

IID = "GOOG.NASDAQ"
#: The pause before a round: the next standby imports the framework meanwhile (about 3.5 s).
WARM_SECS = 6.0
ROUNDS = 5


@pytest.fixture(scope="module")
def goog() -> Any:
    from backtesting.test import GOOG

    return GOOG


@pytest.fixture(scope="module")
def catalog(goog: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from spine.importer.config import ImportOptions
    from spine.importer.service import run_import

    work = tmp_path_factory.mktemp("goog")
    csv = work / "goog.csv"
    goog.to_csv(csv, index_label="date")
    run_import(ImportOptions(file=csv, venue="NASDAQ", catalog_dir=work, symbol="GOOG", step="1d", progress=False))
    return work


def completed(gateway: str, label: str) -> str:
    """Submit the daily run and poll until it is COMPLETED; its job id."""
    body = {"strategy_id": "latency", "resolution": "1d", "parameters": {"quantity": "10"}, "label": label}
    status, receipt = post(gateway + "/v2/backtests", body)
    assert status == 202, receipt
    job_id = str(receipt["job_id"])
    deadline = time.monotonic() + 120
    while True:
        state = get(gateway + f"/v2/backtests/{job_id}")[1]["state"]
        if state == "COMPLETED":
            return job_id
        assert state not in {"FAILED", "CANCELLED"}, get(gateway + f"/v2/backtests/{job_id}")[1]
        assert time.monotonic() < deadline, f"{job_id} not done in 120 s"
        time.sleep(0.005)


def _marks(gateway: str, job_id: str) -> dict[str, float]:
    """Each STATE's time (ns) and the engine's own seconds (its LOG line) of one job."""
    events = get(gateway + f"/v2/backtests/{job_id}/events?limit=1000")[1]["items"]
    marks: dict[str, float] = {e["state"]: int(e["ts_event"]) for e in events if e["type"] == "STATE"}
    ran = [re.search(r"engine ran \d+ bars in ([0-9.]+) s", e["message"] or "") for e in events if e["type"] == "LOG"]
    marks["engine_ns"] = next(float(m.group(1)) for m in ran if m) * 1e9
    return marks


def test_submit_to_completed_daily(benchmark: BenchmarkFixture, catalog: Path, tmp_path: Path) -> None:
    benchmark.group = "a 2,148-bar daily backtest, submit to COMPLETED on a warm stack"
    jobs: list[str] = []
    with stack(tmp_path, catalog, 1, "latency", IID, f'catalogs = ["{catalog}"]\n') as gateway:
        completed(gateway, "warm-up")  # the first standby was warm; this starts the next

        def once() -> None:
            jobs.append(completed(gateway, f"r{len(jobs)}"))

        benchmark.pedantic(once, setup=lambda: time.sleep(WARM_SECS), rounds=ROUNDS, iterations=1)
        marks = [_marks(gateway, job_id) for job_id in jobs]
    spans = {
        "queue_wait": [m["RUNNING"] - m["QUEUED"] for m in marks],
        "run": [m["COMPLETED"] - m["RUNNING"] for m in marks],
        "engine": [m["engine_ns"] for m in marks],
        # What a job costs around its engine: the hand-off, reading and folding the bars,
        # the documents and identities, storing them and finishing the job.
        "around_the_engine": [m["COMPLETED"] - m["RUNNING"] - m["engine_ns"] for m in marks],
    }
    for name, values in spans.items():
        benchmark.extra_info[f"{name}_median_ms"] = round(sorted(values)[len(values) // 2] / 1e6, 1)


def test_submit_to_completed_daily_rival_backtesting_py(benchmark: BenchmarkFixture, goog: Any) -> None:
    benchmark.group = "a 2,148-bar daily backtest, submit to COMPLETED on a warm stack"
    from backtesting.lib import crossover
    from backtesting.test import SMA

    class SmaCross(backtesting.Strategy):  # type: ignore[misc,name-defined]
        def init(self) -> None:
            self.fast = self.I(SMA, self.data.Close, 12)
            self.slow = self.I(SMA, self.data.Close, 26)

        def next(self) -> None:
            if crossover(self.fast, self.slow):
                self.buy(size=10)
            elif crossover(self.slow, self.fast):
                self.position.close()

    def run() -> Any:
        return backtesting.Backtest(goog, SmaCross, cash=1_000_000, trade_on_close=True, finalize_trades=True).run()

    stats = benchmark(run)
    assert stats["# Trades"] > 0
