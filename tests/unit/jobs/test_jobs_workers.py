"""The workers' half of the store on SQLite: a worker's liveness row (created, refreshed,
gone), which workers count as alive against the stale bound, and the queue's counts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from jobs_helpers import save, submit
from spine.jobs import Store
from spine.jobs.workers import WorkerSeen

SECOND = 1_000_000_000


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(f"sqlite:///{tmp_path}/spine.db") as opened:
        save(opened, None, "a")
        yield opened


def test_a_worker_is_alive_until_stale_or_gone(store: Store) -> None:
    assert store.live_workers(100 * SECOND, 10 * SECOND) == []
    store.alive("w1", 5 * SECOND, 10 * SECOND)
    store.alive("w2", 6 * SECOND, 12 * SECOND)
    store.alive("w1", 5 * SECOND, 18 * SECOND)  # refreshed: one row, seen later
    assert store.live_workers(20 * SECOND, 10 * SECOND) == [
        WorkerSeen("w1", 5 * SECOND, 18 * SECOND),
        WorkerSeen("w2", 6 * SECOND, 12 * SECOND),
    ]
    assert store.live_workers(23 * SECOND, 10 * SECOND) == [WorkerSeen("w1", 5 * SECOND, 18 * SECOND)]
    store.gone("w1")
    store.gone("w1")  # twice is harmless
    assert store.live_workers(20 * SECOND, 10 * SECOND) == [WorkerSeen("w2", 6 * SECOND, 12 * SECOND)]


def test_a_restarted_worker_keeps_one_row_with_its_new_start(store: Store) -> None:
    store.alive("w1", 1, 2)
    store.alive("w1", 50, 60)
    assert store.live_workers(60, 10) == [WorkerSeen("w1", 50, 60)]


def test_job_counts_by_state(store: Store) -> None:
    assert store.job_counts() == {}
    for label in "abc":
        submit(store, label)
    store.claim("w1", 10)
    assert store.job_counts() == {"QUEUED": 2, "RUNNING": 1}
