"""The queue on PostgreSQL (a throwaway cluster, tests/pg.py): two ``spine worker`` processes
on twenty short jobs run each exactly once; saves and claims racing from threads, each with
its own engine, never both win."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from workers import running_workers, wait_until

from jobs_helpers import STRATEGY, one_winner, race_claims, race_saves, rid, save, submit
from pg import cluster_or_skip, fresh_database
from spine.jobs import Store


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    with cluster_or_skip() as url:
        yield url


_DATABASES = itertools.count(1)


@pytest.fixture
def store(cluster: str) -> Iterator[Store]:
    """A store on a database of its own."""
    with Store(fresh_database(cluster, f"spine_test_{next(_DATABASES)}")) as opened:
        yield opened


def test_two_workers_run_each_of_twenty_jobs_exactly_once(store: Store, tmp_path: Path) -> None:
    save(store, None, "a")
    runs = tmp_path / "runs.txt"
    with running_workers(tmp_path, store.url) as workers:
        for name in ("w1", "w2"):
            workers.start(name)
        for name in ("w1", "w2"):
            workers.ready(name)
        jobs = [submit(store, str(n), {"runs": str(runs), "sleep": 0.05}) for n in range(20)]
        wait_until(lambda: all(job.state == "COMPLETED" for job in store.jobs(limit=100)), "all completed", workers)
        assert [workers.stop(name) for name in ("w1", "w2")] == [0, 0]
    lines = [line.split() for line in runs.read_text().splitlines()]
    assert Counter(job_id for job_id, *_ in lines) == {job.job_id: 1 for job in jobs}
    for job in jobs:
        done = store.job(job.job_id)
        report = json.loads(store.outputs(job.job_id, "report")[0])
        assert (report["worker"], report["attempt"], done.attempts) == (done.worker_id, 1, 1)
    assert {worker for _, worker, *_ in lines} == {"w1", "w2"}


@pytest.mark.parametrize("first", [True, False], ids=["first-save", "on-a-head"])
def test_saves_racing_on_one_head_exactly_one_wins(store: Store, first: bool) -> None:
    parent = None if first else save(store, None, "base").revision_id
    winner = one_winner(race_saves(store.url, parent))
    assert store.strategy(STRATEGY).head_revision_id == winner


def test_claims_racing_from_threads_take_every_job_once(store: Store) -> None:
    save(store, None, "a")
    ids = {submit(store, str(n)).job_id for n in range(30)}
    taken = race_claims(store.url, log=True)
    assert sorted(taken) == sorted(ids)
    for job_id in ids:
        assert [e.sequence for e in store.events(job_id)] == [1, 2, 3]
    assert rid("job 0") in ids
