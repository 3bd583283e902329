"""Trials per minute of a parameter study: TPE (seeded) over the EMA cross's fast (2..50) and
slow (10..200) periods, scored by the run's P&L, over 20,000 one-minute bars of one instrument
(``SPINE_BENCH_STUDY_BARS``), 50 trials (``SPINE_BENCH_STUDY_TRIALS``), side by side:

- spine: ``POST /v2/studies`` on a warm stack (a gateway, its scheduler, two ``spine worker``
  processes with the real runner), timed to the study COMPLETED (polled every 20 ms); two
  trials run at once, each a backtest job in a fresh process;
- optuna loop: ``study.optimize`` in one process, each trial the hand-written EMA cross on a
  raw ``BacktestEngine`` fed the catalog's bars (tests/unit/backtest/backtest_support.py's
  ``hand_run``), scored by its final balance.

Both search the same space with the same sampler and seed. Target (issue 36): spine at least
1.6x the loop's trials per minute. Smoke mode (CI): 2,000 bars, 5 trials, --benchmark-disable.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import optuna
import pytest
from pytest_benchmark.fixture import BenchmarkFixture

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(ROOT / "tests" / "unit" / "backtest"))

from backtest_support import hand_run, node_catalog  # noqa: E402
from nodes import get, post  # noqa: E402

from benches.backtest.stacks import stack  # noqa: E402

BARS = int(os.environ.get("SPINE_BENCH_STUDY_BARS", "20000"))
TRIALS = int(os.environ.get("SPINE_BENCH_STUDY_TRIALS", "50"))
SEED = 1
RIVALS = ["spine", "optuna loop"]


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return node_catalog(tmp_path_factory.mktemp("bench-study"), bars=BARS)


@pytest.fixture(scope="module")
def gateway(catalog: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    with stack(tmp_path_factory.mktemp("study-stack"), catalog, 2, "study", config="study_poll_secs = 0.02\n") as url:
        _spine(url, 2)  # warm: each worker's standby has imported the framework
        yield url


def _spine(gateway: str, trials: int = TRIALS) -> int:
    body = {
        "strategy_id": "study",
        "search": {"fast": {"low": 2, "high": 50}, "slow": {"low": 10, "high": 200}},
        "objective": {"metric": "total_pnl", "direction": "MAXIMIZE"},
        "trials": trials,
        "parallel": 2,
        "sampler": {"name": "TPE", "seed": SEED},
        "training": {"start": "0", "end": str(time.time_ns())},
    }
    status, study = post(gateway + "/v2/studies", body)
    assert status == 201, study
    url = f"{gateway}/v2/studies/{study['study_id']}"
    deadline = time.monotonic() + 3_600
    while (found := get(url)[1])["state"] not in ("COMPLETED", "FAILED"):
        assert time.monotonic() < deadline, found
        time.sleep(0.02)
    assert found["state"] == "COMPLETED" and found["progress"]["complete"] == trials, found
    return int(found["progress"]["complete"])


def _loop(catalog: Path) -> int:
    def objective(trial: optuna.Trial) -> float:
        fast, slow = trial.suggest_int("fast", 2, 50), trial.suggest_int("slow", 10, 200)
        return float(hand_run(catalog, fast, slow, "LONG_ONLY", quantity="0.1")["balance"])

    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=SEED))
    study.optimize(objective, n_trials=TRIALS)
    return len(study.trials)


@pytest.mark.parametrize("rival", RIVALS)
def test_study_trials_per_minute(benchmark: BenchmarkFixture, request: pytest.FixtureRequest, rival: str) -> None:
    benchmark.group = f"study: {TRIALS} EMA-cross trials over {BARS} one-minute bars"
    benchmark.extra_info["trials"] = TRIALS
    if rival == "spine":
        run, argument = _spine, request.getfixturevalue("gateway")
    else:
        run, argument = _loop, request.getfixturevalue("catalog")
        hand_run(argument, 10, 30, "LONG_ONLY", quantity="0.1")  # warm: the framework imported
    done = benchmark.pedantic(run, args=(argument,), rounds=1, iterations=1, warmup_rounds=0)
    assert done == TRIALS
    if benchmark.stats is not None:
        benchmark.extra_info["trials_per_minute"] = TRIALS / benchmark.stats.stats.median * 60
