"""The studies' rows in the store: every transition the states allow, every one they refuse
(with the state found), the schedulers' leases and their progress writes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import update

from spine.jobs import NotFound, Store
from spine.jobs.schema import studies
from spine.jobs.study_rows import Progress, StudyStateRefused

SECOND = 10**9


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(f"sqlite:///{tmp_path / 'spine.db'}") as opened:
        yield opened


def make(store: Store, study_id: str = "a" * 64, now: int = 1) -> str:
    store.create_study(study_id, "ema", "b" * 64, '{"trials":1}', now)
    return study_id


ALLOWED = [
    ("QUEUED", ("QUEUED",), "RUNNING"),
    ("QUEUED", ("QUEUED", "RUNNING"), "PAUSED"),
    ("RUNNING", ("QUEUED", "RUNNING"), "PAUSED"),
    ("PAUSED", ("PAUSED",), "RUNNING"),
    ("RUNNING", ("RUNNING",), "COMPLETED"),
    ("RUNNING", ("RUNNING",), "FAILED"),
    ("COMPLETED", ("COMPLETED", "FAILED"), "RUNNING"),
    ("FAILED", ("COMPLETED", "FAILED"), "RUNNING"),
    ("QUEUED", ("QUEUED", "RUNNING", "PAUSED"), "CANCELLED"),
    ("RUNNING", ("QUEUED", "RUNNING", "PAUSED"), "CANCELLED"),
    ("PAUSED", ("QUEUED", "RUNNING", "PAUSED"), "CANCELLED"),
]


def put(store: Store, study_id: str, state: str) -> None:
    """Bring the study to ``state`` by allowed steps."""
    path = {
        "QUEUED": [],
        "RUNNING": ["RUNNING"],
        "PAUSED": ["PAUSED"],
        "COMPLETED": ["RUNNING", "COMPLETED"],
        "FAILED": ["RUNNING", "FAILED"],
        "CANCELLED": ["CANCELLED"],
    }[state]
    for target in path:
        current = store.study(study_id).state
        store.move_study(study_id, (current,), target, 2)


@pytest.mark.parametrize(("start", "sources", "target"), ALLOWED)
def test_each_allowed_transition_moves_the_study(
    store: Store, start: str, sources: tuple[str, ...], target: str
) -> None:
    study_id = make(store)
    put(store, study_id, start)
    moved = store.move_study(study_id, sources, target, 5, "why" if target == "FAILED" else None)
    assert (moved.state, moved.updated_ts) == (target, 5)
    assert moved.last_error == ("why" if target == "FAILED" else None)


REFUSED = [
    ("COMPLETED", ("QUEUED", "RUNNING"), "PAUSED"),
    ("CANCELLED", ("PAUSED",), "RUNNING"),
    ("COMPLETED", ("PAUSED",), "RUNNING"),
    ("CANCELLED", ("COMPLETED", "FAILED"), "RUNNING"),
    ("COMPLETED", ("QUEUED", "RUNNING", "PAUSED"), "CANCELLED"),
    ("PAUSED", ("RUNNING",), "COMPLETED"),
]


@pytest.mark.parametrize(("start", "sources", "target"), REFUSED)
def test_each_refused_transition_names_the_state_found(
    store: Store, start: str, sources: tuple[str, ...], target: str
) -> None:
    study_id = make(store)
    put(store, study_id, start)
    with pytest.raises(StudyStateRefused) as refused:
        store.move_study(study_id, sources, target, 5)
    assert refused.value.state == start and store.study(study_id).state == start


def test_a_move_to_the_state_it_is_in_is_no_change(store: Store) -> None:
    study_id = make(store)
    put(store, study_id, "PAUSED")
    assert store.move_study(study_id, ("QUEUED", "RUNNING"), "PAUSED", 9).state == "PAUSED"
    with pytest.raises(NotFound):
        store.move_study("c" * 64, ("QUEUED",), "RUNNING", 9)


def test_a_lease_keeps_a_study_with_one_scheduler_until_it_goes_stale(store: Store) -> None:
    study_id = make(store)
    assert [r.study_id for r in store.claim_studies("g1", 10 * SECOND, 30 * SECOND)] == [study_id]
    assert store.claim_studies("g2", 20 * SECOND, 30 * SECOND) == []  # g1's lease is fresh
    assert [r.owner for r in store.claim_studies("g1", 25 * SECOND, 30 * SECOND)] == ["g1"]
    assert [r.owner for r in store.claim_studies("g2", 60 * SECOND, 30 * SECOND)] == ["g2"]  # stale: taken over
    assert not store.record_progress(study_id, "g1", Progress(trials=3), 61 * SECOND)  # g1 lost it
    assert store.record_progress(study_id, "g2", Progress(trials=3, complete=1, running=2), 61 * SECOND)
    assert store.study(study_id).progress == Progress(trials=3, complete=1, running=2)


def test_a_scheduler_keeps_a_study_while_trials_run_whatever_its_state(store: Store) -> None:
    asking, paused, cancelled = make(store, "1" * 64), make(store, "2" * 64), make(store, "3" * 64)
    put(store, paused, "PAUSED")
    put(store, cancelled, "CANCELLED")
    assert {r.study_id for r in store.claim_studies("g", 1, SECOND)} == {asking}
    store.claim_studies("g", 1, SECOND)
    for study_id in (paused, cancelled):  # never held: their progress is not this scheduler's to write
        assert not store.record_progress(study_id, "g", Progress(running=1), 2)
    # A study cancelled while trials run, their scheduler dead: still collected by the next one.
    with store._write() as connection:
        connection.execute(update(studies).where(studies.c.study_id == cancelled).values(running=1))
    assert {r.study_id for r in store.claim_studies("g", 3, SECOND)} == {asking, cancelled}


def test_the_list_is_newest_first_and_filters(store: Store) -> None:
    for k in range(3):
        make(store, str(k) * 64, now=k)
    put(store, "1" * 64, "PAUSED")
    assert [r.study_id for r in store.studies()] == ["2" * 64, "1" * 64, "0" * 64]
    assert [r.study_id for r in store.studies(offset=1, limit=1)] == ["1" * 64]
    assert [r.study_id for r in store.studies(state="PAUSED")] == ["1" * 64]
    assert store.studies(strategy_id="other") == []
    store.set_holdout("0" * 64, 4, "d" * 64, 9)
    assert (store.study("0" * 64).holdout_trial, store.study("0" * 64).holdout_job_id) == (4, "d" * 64)
