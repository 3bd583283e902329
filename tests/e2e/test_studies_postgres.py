"""Studies on PostgreSQL (a throwaway cluster, tests/pg.py): the jobs and Optuna's RDB storage
(with heartbeats) in one database, a gateway's scheduler and two ``spine worker`` processes
running the trials (tests/unit/jobs/study_fake_runner.py)."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "jobs"))

from gateways import template_gateway  # noqa: E402
from nodes import get, post  # noqa: E402
from workers import running_workers, wait_until  # noqa: E402

from pg import cluster_or_skip, fresh_database  # noqa: E402
from reference.wire_validator import validate  # noqa: E402

RUNNER = {"SPINE_WORKER_RUNNER": "study_fake_runner:run"}
TRAINING = {"start": "1704067200000000000", "end": "1706745599999999999"}


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    with cluster_or_skip() as url:
        yield url


def ok(url: str) -> dict:
    status, document = get(url)
    assert status == 200, document
    validate(document)
    return document


def test_two_workers_share_a_study_and_a_killed_one_never_strands_a_trial(cluster: str, tmp_path: Path) -> None:
    database = fresh_database(cluster, "spine_studies")
    gate, runs = tmp_path / "gate", tmp_path / "runs.txt"
    config = f'study_poll_secs = 0.05\ndatabase = "{database}"\n'
    with template_gateway(tmp_path / "gateway", config) as gateway, running_workers(tmp_path, database) as workers:
        steer = {"STUDY_FAKE_RUNS": str(runs), "STUDY_FAKE_GATE": str(gate)}
        for name in ("w1", "w2"):
            workers.start(name, **RUNNER, **steer)
        gate.write_text("")
        status, study = post(
            gateway + "/v2/studies",
            {
                "strategy_id": "ema",
                "search": {"fast": {"low": 2, "high": 12}, "slow": {"low": 10, "high": 30}},
                "objective": {"metric": "total_pnl"},
                "trials": 12,
                "parallel": 2,
                "training": TRAINING,
            },
        )
        assert status == 201, study
        url = f"{gateway}/v2/studies/{study['study_id']}"

        def held() -> list[str]:
            return [line.split()[1] for line in runs.read_text().splitlines()] if runs.exists() else []

        # Both trials held by the gate, one on each worker: kill the first worker mid-trial.
        wait_until(lambda: sorted(held()) == ["w1", "w2"], "a trial on each worker", workers)
        workers.kill("w1")
        gate.unlink()
        wait_until(
            lambda: ok(url)["state"] == "COMPLETED" and ok(url)["progress"]["running"] == 0,
            "the study completed",
            workers,
            seconds=120,
        )
        trials = ok(url + "/trials?limit=100")["items"]
        final = ok(url)
    assert len(trials) == 12 and final["progress"]["complete"] == 12 and final["trials"] == 12
    assert all(t["state"] == "COMPLETE" for t in trials)
    # Each trial's job ran once, but the killed worker's: it ran again on the live worker.
    by_job = Counter(line.split()[0] for line in runs.read_text().splitlines())
    assert set(by_job) == {t["job_id"] for t in trials}
    assert sorted(by_job.values()) == [1] * 11 + [2]
    assert {"w1", "w2"} <= set(held())
