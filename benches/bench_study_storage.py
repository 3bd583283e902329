"""Optuna's trial storage for a study, side by side: one study asked and told
``SPINE_BENCH_STUDY_TRIALS`` trials (default 100) through :class:`spine.studies.driver.StudyDriver`
with the TPE sampler, on a journal file (``JournalFileBackend``, Spine's default) against RDB
storage on SQLite (the same database engine as the job store). The objective is trivial: what
is timed is the storage and the sampler's reads of it. Issue 36 item 5 picks the default from
these figures.

Smoke mode (CI): --benchmark-disable with SPINE_BENCH_STUDY_TRIALS=5.
"""

from __future__ import annotations

import os
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from spine.strategies.plan import ParameterDecl
from spine.studies.driver import StudyDriver, journal_storage
from spine.studies.space import parse_space

TRIALS = int(os.environ.get("SPINE_BENCH_STUDY_TRIALS", "100"))
SPACE = parse_space(
    {"fast": {"low": 2, "high": 50}, "slow": {"low": 20, "high": 200, "step": 5}},
    [ParameterDecl("fast", "integer", "10", "2", "100"), ParameterDecl("slow", "integer", "30", "5", "400")],
)


def _storage(kind: str, directory: Path) -> Any:
    if kind == "journal":
        return journal_storage(directory / "study.log")
    return f"sqlite:///{directory / 'study.db'}"


@pytest.mark.parametrize("kind", ["journal", "rdb-sqlite"])
def test_ask_and_tell_a_study(benchmark: BenchmarkFixture, tmp_path: Path, kind: str) -> None:
    benchmark.group = f"a study of {TRIALS} trials, asked and told (TPE)"
    rounds = iter(range(10**6))

    def study() -> int:
        directory = tmp_path / str(next(rounds))
        directory.mkdir()
        driver = StudyDriver(_storage(kind, directory), "bench", SPACE, "MAXIMIZE", seed=3)
        for _ in range(TRIALS):
            trial = driver.ask()
            driver.tell(trial.number, -abs(Decimal(trial.params["fast"]) * 7 - Decimal(trial.params["slow"])))
        best = driver.best()
        return -1 if best is None else best.number

    assert benchmark.pedantic(study, rounds=3, iterations=1) >= 0
