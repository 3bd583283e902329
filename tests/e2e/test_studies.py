"""Parameter studies through real processes: a private-operator gateway (its scheduler drives
Optuna with ask and tell) and ``spine worker`` processes running each trial as a backtest job.
The workers run a stand-in runner (tests/unit/jobs/study_fake_runner.py) whose objective is a
known function of the parameters, so every trial's value and the best are known; the real
runner's study is in test_study_stack.py."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "jobs"))

from gateways import template_gateway  # noqa: E402
from nodes import get, post  # noqa: E402
from study_fake_runner import score  # noqa: E402
from workers import Workers, running_workers, wait_until  # noqa: E402

from reference.wire_validator import validate  # noqa: E402

RUNNER = {"SPINE_WORKER_RUNNER": "study_fake_runner:run"}
#: 2024-01-01 and 2024-02-01 (the fake runner reads no bars: any span does).
TRAINING = {"start": "1704067200000000000", "end": "1706745599999999999"}
HOLDOUT = {"start": "2024-02-01T00:00:00Z", "end": "2024-02-29T23:59:59Z"}


@dataclass
class Stack:
    gateway: str
    workers: Workers
    home: Path


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    home = tmp_path_factory.mktemp("studies")
    with template_gateway(home / "gateway", "study_poll_secs = 0.05\n") as gateway:
        with running_workers(home, f"sqlite:///{home / 'gateway' / 'spine.db'}") as workers:
            for name in ("w1", "w2"):
                workers.start(name, **RUNNER, STUDY_FAKE_RUNS=str(home / "runs.txt"))
            yield Stack(gateway, workers, home)


def body(**changes: Any) -> dict[str, Any]:
    study = {
        "strategy_id": "ema",
        "search": {"fast": {"low": 2, "high": 12}, "slow": {"low": "10", "high": "30", "step": "2"}},
        "objective": {"metric": "total_pnl", "direction": "MAXIMIZE"},
        "trials": 8,
        "parallel": 2,
        "sampler": {"name": "TPE", "seed": 7},
        "training": TRAINING,
        "holdout": HOLDOUT,
        "label": "e2e",
    }
    return study | changes


def ok(url: str) -> Any:
    status, document = get(url)
    assert status == 200, document
    validate(document)
    return document


def create(stack: Stack, **changes: Any) -> dict[str, Any]:
    status, study = post(stack.gateway + "/v2/studies", body(**changes))
    assert status == 201, study
    validate(study)
    return study


def settled(stack: Stack, study_id: str, states: tuple[str, ...] = ("COMPLETED", "FAILED", "CANCELLED")) -> Any:
    """The study once it is in one of ``states`` with no trial running."""
    url = f"{stack.gateway}/v2/studies/{study_id}"
    found: list[Any] = []

    def done() -> bool:
        found[:] = [ok(url)]
        return found[0]["state"] in states and found[0]["progress"]["running"] == 0

    wait_until(done, f"study {study_id} in {states}", stack.workers, seconds=120)
    return found[0]


def trials(stack: Stack, study_id: str) -> list[dict[str, Any]]:
    page = ok(f"{stack.gateway}/v2/studies/{study_id}/trials?limit=1000")
    assert page["study_id"] == study_id and page["next_cursor"] is None
    return page["items"]


def values(trial: dict[str, Any]) -> dict[str, str]:
    return {p["name"]: p["value"] for p in trial["params"]}


def test_a_study_runs_its_trials_and_finds_the_best(stack: Stack) -> None:
    study = create(stack)
    assert study["state"] == "QUEUED" and study["progress"]["target"] == 8
    assert study["definition"]["search"]["slow"] == {"low": "10", "high": "30", "step": "2"}
    done = settled(stack, study["study_id"])
    assert done["state"] == "COMPLETED" and done["trials"] == 8 and done["progress"]["complete"] == 8, done
    items = trials(stack, study["study_id"])
    assert [t["trial"] for t in items] == list(range(8))
    for trial in items:
        got = values(trial)
        assert trial["state"] == "COMPLETE" and int(got["fast"]) in range(2, 13)
        assert int(got["slow"]) in range(10, 31, 2)
        assert Decimal(trial["value"]) == score(got | {"quantity": "0.1"})  # as served, exactly
        assert trial["run_id"] and trial["result_hash"] and trial["job_id"]
        job = ok(f"{stack.gateway}/v2/backtests/{trial['job_id']}")
        assert job["state"] == "COMPLETED" and job["run_id"] == trial["run_id"]
    best = max(items, key=lambda t: Decimal(t["value"]))
    assert done["best_trial"] == best["trial"] and done["best_value"] == best["value"]
    answer = get(f"{stack.gateway}/v2/studies/{study['study_id']}/best")[1]
    assert answer["trial"] == best and Decimal(answer["statistics"]["total_pnl"]) == Decimal(best["value"])
    assert ok(f"{stack.gateway}/v2/studies/{study['study_id']}/trials/{best['trial']}") == best
