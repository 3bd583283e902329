"""The study scheduler in-process, on a store and a trial storage of its own: it takes up a
study, submits its trials as backtest jobs through the one request path, and deals with a
trial a dead scheduler asked for but never submitted (failed with its reason; asked again with
its parameters where the storage has heartbeats)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import msgspec
import optuna
import pytest
from optuna.trial import TrialState

from spine.http.bodies import StudyBody
from spine.jobs import Store
from spine.jobs.request import ExecutionConfig, decode
from spine.strategies import document, revisions
from spine.strategies.templates import template_files
from spine.studies.definition import resolve, spans, study_id
from spine.studies.driver import StudyDriver, journal_storage
from spine.studies.scheduler import Scheduler
from spine.studies.study_run import StudyRun, trial_record

EXECUTION = ExecutionConfig(capital="100000", seed=42)
BODY = {
    "strategy_id": "ema",
    "search": {"fast": {"low": 2, "high": 9}, "quantity": {"low": "0.1", "high": "0.5", "step": "0.1"}},
    "objective": {"metric": "total_pnl"},
    "trials": 3,
    "parallel": 2,
    "sampler": {"name": "RANDOM", "seed": 4},
    "training": {"start": "1000", "end": "2000"},
}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(f"sqlite:///{tmp_path / 'spine.db'}") as opened:
        files = template_files("ema_cross")
        hashes = revisions.content_hashes(files)
        opened.save_revision(
            "ema",
            None,
            "",
            [(p, files[p], hashes[p]) for p in files],
            revisions.revision_id(None, files),
            ["BTCUSDT.SIM"],
            "EMA",
            None,
            1,
        )
        yield opened


def created(store: Store) -> str:
    body = msgspec.convert(BODY, StudyBody)
    revision = store.strategy("ema").head_revision_id
    declared = document.plan(template_files("ema_cross")).parameters
    definition = resolve(body, revision, declared, *spans(body))
    sid = study_id(definition, 5, "g")
    store.create_study(sid, "ema", revision, definition.encode(), 5)
    return sid


def orphan(storage: optuna.storages.BaseStorage, sid: str, store: Store) -> dict[str, str]:
    """A trial asked by a scheduler that died before submitting it; its exact parameters."""
    run = StudyRun(store.study(sid), store, storage, "dead", EXECUTION)
    return run.driver.ask().params


def storages(tmp_path: Path) -> dict[str, optuna.storages.BaseStorage]:
    return {
        "journal": journal_storage(tmp_path / "studies.journal"),
        "rdb": optuna.storages.RDBStorage(
            f"sqlite:///{tmp_path / 'optuna.db'}",
            heartbeat_interval=1,
            grace_period=2,
            heartbeat_stale_trial_callback=optuna.storages.RetryHeartbeatStaleTrialCallback(max_retry=3),
        ),
    }


@pytest.mark.parametrize("kind", ["journal", "rdb"])
def test_a_scheduler_takes_up_a_study_and_deals_with_an_orphan(store: Store, tmp_path: Path, kind: str) -> None:
    storage = storages(tmp_path)[kind]
    sid = created(store)
    asked = orphan(storage, sid, store)
    scheduler = Scheduler(store, storage, "g", EXECUTION)
    scheduler.turn(claim=True)
    assert store.study(sid).state == "RUNNING"
    trials = optuna.load_study(study_name=sid, storage=storage).get_trials()
    first = trials[0]
    assert first.state == TrialState.FAIL
    assert trial_record(first)["reason"] == "its scheduler stopped before submitting it"
    running = [t for t in trials if t.state == TrialState.RUNNING]
    assert len(running) == 2  # parallel 2
    jobs = {trial_record(t)["job_id"]: t for t in running}
    for job in store.jobs():
        request = decode(job.request)
        assert (request.spec.start, request.spec.end) == ("1000", "2000")  # the training window
        assert request.body.label == f"study {sid[:12]} trial {jobs[job.job_id].number}"
    if kind == "rdb":  # asked again first, with the same parameters
        retried = trials[1]
        assert retried.system_attrs["failed_trial"] == 0 and retried.state == TrialState.RUNNING
        assert decode(store.job(trial_record(retried)["job_id"]).request).spec.values["fast"] == asked["fast"]
        assert decode(store.job(trial_record(retried)["job_id"]).request).spec.values["quantity"] == asked["quantity"]
    else:
        assert "failed_trial" not in trials[1].system_attrs
    progress = store.study(sid).progress
    assert (progress.trials, progress.running, progress.failed) == (len(trials), 2, 1)


def test_a_cancelled_study_cancels_its_running_jobs(store: Store, tmp_path: Path) -> None:
    storage = journal_storage(tmp_path / "studies.journal")
    sid = created(store)
    scheduler = Scheduler(store, storage, "g", EXECUTION)
    scheduler.turn(claim=True)
    store.move_study(sid, ("RUNNING",), "CANCELLED", 9)
    scheduler.turn(claim=True)  # cancels the QUEUED jobs at once
    scheduler.turn(claim=True)  # and collects them
    assert {job.state for job in store.jobs()} == {"CANCELLED"}
    trials = optuna.load_study(study_name=sid, storage=storage).get_trials()
    assert [t.state for t in trials] == [TrialState.FAIL, TrialState.FAIL]
    assert store.study(sid).progress.running == 0
    assert store.claim_studies("g", 10**18, 1) == []  # nothing left to drive


def test_a_driver_of_another_seed_asks_otherwise(tmp_path: Path) -> None:
    """The sampler's seed is the study's: the scheduler's driver is built from the definition."""
    from spine.studies.space import parse_space

    space = parse_space(BODY["search"], document.plan(template_files("ema_cross")).parameters)
    drawn = []
    for seed in (4, 4, 5):
        driver = StudyDriver(
            journal_storage(tmp_path / f"{len(drawn)}.journal"), "s", space, "MAXIMIZE", sampler="RANDOM", seed=seed
        )
        drawn.append([driver.ask().params for _ in range(3)])
    assert drawn[0] == drawn[1] != drawn[2]


def test_a_study_whose_revision_cannot_be_read_fails_saying_why(store: Store, tmp_path: Path) -> None:
    sid = created(store)
    with store._write() as connection:  # its revision's definition names one the store lacks
        from sqlalchemy import update

        from spine.jobs.schema import studies

        connection.execute(
            update(studies).where(studies.c.study_id == sid).values(definition=_other_revision(store, sid))
        )
    Scheduler(store, journal_storage(tmp_path / "studies.journal"), "g", EXECUTION).turn(claim=True)
    failed = store.study(sid)
    assert failed.state == "FAILED" and failed.last_error.startswith("the study cannot run: NOT_FOUND"), failed


def _other_revision(store: Store, sid: str) -> str:
    from spine.studies.definition import Definition

    definition = Definition.decode(store.study(sid).definition)
    return msgspec.structs.replace(definition, revision_id="f" * 64).encode()
