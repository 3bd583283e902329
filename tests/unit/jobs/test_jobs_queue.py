"""The queue half of the store on SQLite: submit, events, cancel, claims, heartbeats, finish,
reaping and release, and the documents its records make."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from jobs_helpers import STRATEGY, race_claims, rid, save, submit
from reference.wire_validator import validate
from spine.jobs import AlreadyFinished, Job, JobExists, LeaseLost, NotFound, Store, documents
from spine.jobs.queue import MAX_MESSAGE

SECOND = 1_000_000_000
EXECUTION = '{"capital":"1000000","currency":"USDT","fee_model":"FAKE","fill_model":"FAKE","seed":0}'


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(f"sqlite:///{tmp_path}/spine.db") as opened:
        save(opened, None, "a")
        yield opened


def kinds(store: Store, job_id: str) -> list[tuple[str, str | None]]:
    """The job's events as (type, state or level), checking they are consecutive from 1 and
    valid documents."""
    events = store.events(job_id)
    assert [e.sequence for e in events] == list(range(1, len(events) + 1))
    for event in events:
        validate(documents.event(event))
    return [(e.type, e.state if e.type == "STATE" else e.level) for e in events]


def test_submit_queues_a_job_with_its_first_state_event(store: Store) -> None:
    job = submit(store, "1", {"x": 1}, now=10)
    assert (job.state, job.submitted_ts, job.started_ts, job.attempts, job.request) == (
        "QUEUED",
        10,
        None,
        0,
        '{"x":1}',
    )
    assert kinds(store, job.job_id) == [("STATE", "QUEUED")]
    validate(documents.detail(job))
    with pytest.raises(JobExists):
        submit(store, "1")
    with pytest.raises(NotFound):
        store.submit(rid("j2"), STRATEGY, rid("no such revision"), "{}", None, 1, 2, 3)


def test_jobs_list_newest_first_and_claims_take_the_oldest(store: Store) -> None:
    ids = [submit(store, str(n)).job_id for n in range(4)]
    assert [j.job_id for j in store.jobs()] == ids[::-1]
    assert [j.job_id for j in store.jobs(offset=1, limit=2)] == [ids[2], ids[1]]
    claimed = store.claim("w1", 20)
    assert claimed is not None
    assert (
        claimed.job_id,
        claimed.state,
        claimed.worker_id,
        claimed.started_ts,
        claimed.heartbeat_ts,
        claimed.attempts,
    ) == (ids[0], "RUNNING", "w1", 20, 20, 1)
    assert kinds(store, ids[0]) == [("STATE", "QUEUED"), ("STATE", "RUNNING")]
    assert [store.claim("w1", 21).job_id for _ in range(3)] == ids[1:]  # type: ignore[union-attr]
    assert store.claim("w1", 22) is None


def test_events_stay_consecutive_when_appended_from_many_threads(store: Store, tmp_path: Path) -> None:
    job = submit(store, "1")
    url = store.url

    def append(n: int) -> None:
        with Store(url) as own:
            for k in range(20):
                own.append_event(job.job_id, "LOG", None, "INFO", f"thread {n} line {k}", 100 + k)

    threads = [threading.Thread(target=append, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(kinds(store, job.job_id)) == 81
    assert [e.sequence for e in store.events(job.job_id, after_sequence=75, limit=3)] == [76, 77, 78]


def test_append_event_writes_log_lines_only(store: Store) -> None:
    job = submit(store, "1")
    with pytest.raises(ValueError, match="STATE events come with the transitions"):
        store.append_event(job.job_id, "STATE", "RUNNING", None, None, 1)
    with pytest.raises(ValueError, match="a level"):
        store.append_event(job.job_id, "LOG", None, "LOUD", "x", 1)
    with pytest.raises(ValueError, match="a message"):
        store.append_event(job.job_id, "LOG", None, "INFO", None, 1)
    with pytest.raises(NotFound):
        store.append_event(rid("nope"), "LOG", None, "INFO", "x", 1)
    with pytest.raises(NotFound):
        store.events(rid("nope"))
    assert store.append_event(job.job_id, "LOG", None, "WARNING", "é" * (MAX_MESSAGE + 10), 1) == 2
    assert store.events(job.job_id)[-1].message == "é" * MAX_MESSAGE
    kinds(store, job.job_id)


def test_cancel_of_a_queued_job_ends_it_at_once(store: Store) -> None:
    job = submit(store, "1")
    assert store.request_cancel(job.job_id, 30) == "CANCELLED"
    after = store.job(job.job_id)
    assert (after.state, after.finished_ts) == ("CANCELLED", 30)
    assert kinds(store, job.job_id) == [("STATE", "QUEUED"), ("STATE", "CANCELLED")]
    assert store.claim("w1", 31) is None
    validate(documents.detail(after))


def test_cancel_of_a_running_job_is_seen_at_the_next_heartbeat(store: Store) -> None:
    job = submit(store, "1")
    store.claim("w1", 20)
    assert store.heartbeat(job.job_id, "w1", 21) is False
    assert store.request_cancel(job.job_id, 22) == "RUNNING"
    assert store.request_cancel(job.job_id, 23) == "RUNNING"  # asked twice: said once
    assert store.job(job.job_id).cancel_requested
    assert store.heartbeat(job.job_id, "w1", 24) is True
    ended = store.finish(job.job_id, "w1", "CANCELLED", None, None, 25)
    assert (ended.state, ended.finished_ts) == ("CANCELLED", 25)
    assert kinds(store, job.job_id) == [
        ("STATE", "QUEUED"),
        ("STATE", "RUNNING"),
        ("LOG", "INFO"),
        ("STATE", "CANCELLED"),
    ]


def started(store: Store) -> Job:
    """A submitted job claimed by w1 at 20, its run started."""
    job = submit(store, "1")
    store.claim("w1", 20)
    store.set_execution(job.job_id, EXECUTION)
    return job


def end(store: Store, job: Job, state: str, error: str, ts: int) -> Job:
    """``job`` finished by w1 in ``state``: with a run id when COMPLETED, ``error`` when FAILED."""
    run_id = rid("run") if state == "COMPLETED" else None
    return store.finish(job.job_id, "w1", state, run_id, error if state == "FAILED" else None, ts)  # type: ignore[arg-type]


@pytest.mark.parametrize("state", ["COMPLETED", "FAILED", "CANCELLED"])
def test_any_end_of_a_cancel_requested_run_is_cancelled(store: Store, state: str) -> None:
    """The run may see the cancel before its worker's heartbeat does (it polls the flag and
    stops with an error) or finish meanwhile: whatever the worker reports, the job ends
    CANCELLED, with no error and no run id."""
    job = started(store)
    assert store.request_cancel(job.job_id, 21) == "RUNNING"
    ended = end(store, job, state, "CANCELLED: stopped at bar close 5", 22)
    assert (ended.state, ended.finished_ts, ended.last_error, ended.run_id) == ("CANCELLED", 22, None, None)
    assert kinds(store, job.job_id)[-1] == ("STATE", "CANCELLED")
    validate(documents.detail(ended))


@pytest.mark.parametrize("state", ["COMPLETED", "FAILED", "CANCELLED"])
def test_cancel_of_a_finished_job_is_refused_naming_how_it_ended(store: Store, state: str) -> None:
    job = started(store)
    end(store, job, state, "boom", 21)
    with pytest.raises(AlreadyFinished) as refused:
        store.request_cancel(job.job_id, 22)
    assert refused.value.state == state
    with pytest.raises(NotFound):
        store.request_cancel(rid("nope"), 22)
    validate(documents.detail(store.job(job.job_id)))


def test_only_the_holding_worker_heartbeats_and_finishes(store: Store) -> None:
    job = submit(store, "1")
    store.claim("w1", 20)
    with pytest.raises(LeaseLost):
        store.heartbeat(job.job_id, "w2", 21)
    with pytest.raises(LeaseLost):
        store.finish(job.job_id, "w2", "FAILED", None, "x", 21)
    with pytest.raises(ValueError, match="run id"):
        store.finish(job.job_id, "w1", "COMPLETED", None, None, 21)
    with pytest.raises(ValueError, match="reason"):
        store.finish(job.job_id, "w1", "FAILED", None, "", 21)
    with pytest.raises(ValueError, match="COMPLETED, FAILED or CANCELLED"):
        store.finish(job.job_id, "w1", "QUEUED", None, None, 21)
    with pytest.raises(ValueError, match="execution block"):
        store.finish(job.job_id, "w1", "COMPLETED", rid("run"), None, 21)
    store.set_execution(job.job_id, EXECUTION)
    done = store.finish(job.job_id, "w1", "COMPLETED", rid("run"), None, 22)
    assert (done.state, done.run_id, done.finished_ts, done.worker_id) == ("COMPLETED", rid("run"), 22, "w1")
    validate(documents.detail(done))
    with pytest.raises(LeaseLost):
        store.heartbeat(job.job_id, "w1", 23)


def test_claims_racing_from_threads_take_every_job_once(store: Store) -> None:
    ids = {submit(store, str(n)).job_id for n in range(20)}
    taken = race_claims(store.url)
    assert sorted(taken) == sorted(ids)
    assert all(store.job(job_id).attempts == 1 for job_id in ids)


def test_reap_requeues_a_lost_workers_job_then_fails_it(store: Store) -> None:
    job = submit(store, "1")
    store.claim("w1", 1 * SECOND)
    store.set_execution(job.job_id, EXECUTION)
    store.put_outputs(job.job_id, {"report": [b"{}"]})
    assert store.reap(10 * SECOND, 10 * SECOND) == []  # 9 s old: not stale yet
    assert store.reap(12 * SECOND, 10 * SECOND) == [job.job_id]
    requeued = store.job(job.job_id)
    assert (
        requeued.state,
        requeued.worker_id,
        requeued.started_ts,
        requeued.heartbeat_ts,
        requeued.execution,
        requeued.attempts,
    ) == ("QUEUED", None, None, None, None, 1)
    assert store.outputs(job.job_id, "report") == []
    assert store.events(job.job_id)[-2].message == "worker w1 lost during attempt 1 of 2; requeued"
    validate(documents.detail(requeued))
    assert store.claim("w2", 13 * SECOND).attempts == 2  # type: ignore[union-attr]
    assert store.reap(30 * SECOND, 10 * SECOND) == [job.job_id]
    failed = store.job(job.job_id)
    assert (failed.state, failed.finished_ts) == ("FAILED", 30 * SECOND)
    assert failed.last_error == "worker w2 lost during attempt 2 of 2; gave up after 2 attempts"
    assert kinds(store, job.job_id) == [
        ("STATE", "QUEUED"),
        ("STATE", "RUNNING"),
        ("LOG", "WARNING"),
        ("STATE", "QUEUED"),
        ("STATE", "RUNNING"),
        ("LOG", "ERROR"),
        ("STATE", "FAILED"),
    ]
    validate(documents.detail(failed))
    assert store.reap(60 * SECOND, 10 * SECOND) == []


def test_reap_cancels_a_lost_job_whose_cancel_was_requested(store: Store) -> None:
    job = submit(store, "1")
    store.claim("w1", 1)
    store.request_cancel(job.job_id, 2)
    assert store.reap(100, 10) == [job.job_id]
    assert store.job(job.job_id).state == "CANCELLED"


def test_release_hands_a_job_back_without_counting_the_attempt(store: Store) -> None:
    job = submit(store, "1")
    store.claim("w1", 1)
    assert store.release(job.job_id, "w1", "worker w1 stopped", 2) == "QUEUED"
    back = store.job(job.job_id)
    assert (back.state, back.attempts, back.worker_id) == ("QUEUED", 0, None)
    assert store.events(job.job_id)[-2].message == "worker w1 stopped; requeued"
    with pytest.raises(LeaseLost):
        store.release(job.job_id, "w1", "again", 3)
    store.claim("w2", 4)
    store.request_cancel(job.job_id, 5)
    assert store.release(job.job_id, "w2", "worker w2 stopped", 6) == "CANCELLED"


def test_outputs_are_kept_in_order_and_a_part_is_replaced_whole(store: Store) -> None:
    job = submit(store, "1")
    store.put_outputs(job.job_id, {"orders": [b"1", b"2", b"3"], "report": [b"r"]})
    assert store.outputs(job.job_id, "orders") == [b"1", b"2", b"3"]
    assert store.outputs(job.job_id, "orders", offset=1, limit=1) == [b"2"]
    store.put_outputs(job.job_id, {"orders": [b"x"]})
    assert store.outputs(job.job_id, "orders") == [b"x"]
    assert store.outputs(job.job_id, "report") == [b"r"]
    with pytest.raises(ValueError, match="unknown output parts"):
        store.put_outputs(job.job_id, {"bogus": []})


def test_job_positions_are_one_read_of_every_job_named(store: Store) -> None:
    queued, cancelled = submit(store, "1"), submit(store, "2")
    store.request_cancel(cancelled.job_id, 30)
    assert store.job_positions([queued.job_id, cancelled.job_id, rid("nope")]) == {
        queued.job_id: (1, "QUEUED"),
        cancelled.job_id: (2, "CANCELLED"),
    }
    assert store.job_positions([]) == {}
