"""``spine worker`` processes on a SQLite store with the test runner: jobs complete or fail
with their reasons, a cancel ends a running job promptly, a worker killed mid-job leaves the
job to another (or FAILED after two lost attempts), a stopped worker hands its job back, and
every job runs in a fresh process that was started and warmed before the job was submitted
(a standby that died is replaced)."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from workers import Workers, gone, running_workers, wait_until

from jobs_helpers import save, submit
from spine.jobs import Job, Store
from spine.reasons import INTERNAL_RUN


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(f"sqlite:///{tmp_path}/spine.db") as opened:
        save(opened, None, "a")
        yield opened


@pytest.fixture
def workers(tmp_path: Path, store: Store) -> Iterator[Workers]:
    with running_workers(tmp_path, store.url) as started:
        yield started


def state(store: Store, job: Job) -> str:
    return store.job(job.job_id).state


def messages(store: Store, job: Job) -> list[str]:
    return [f"{e.type} {e.state or e.level} {e.message or ''}".strip() for e in store.events(job.job_id)]


def pid_of(directory: Path, job: Job) -> int:
    return int((directory / f"{job.job_id}.pid").read_text())


def test_jobs_complete_or_fail_with_their_reasons(store: Store, workers: Workers) -> None:
    ok = submit(store, "ok")
    raised = submit(store, "raised", {"fail": "boom in /srv/spine/x.py"})
    refused = submit(store, "refused", {"refuse": "NO_BARS: nothing under /srv/spine/catalog/external"})
    exited = submit(store, "exited", {"exit": 3})
    bad = submit(store, "bad", {"bad_run_id": "nope"})
    workers.start("w1")
    jobs = (ok, raised, refused, exited, bad)
    wait_until(lambda: all(state(store, job) in ("COMPLETED", "FAILED") for job in jobs), "all ended", workers)
    done = store.job(ok.job_id)
    assert (done.state, done.run_id, done.worker_id, done.attempts) == (
        "COMPLETED",
        hashlib.sha256(ok.job_id.encode()).hexdigest(),
        "w1",
        1,
    )
    assert json.loads(done.execution or "")["fee_model"] == "FAKE"
    assert json.loads(store.outputs(ok.job_id, "report")[0])["worker"] == "w1"
    assert [m.split(" over ")[0] for m in messages(store, ok)] == [
        "STATE QUEUED",
        "STATE RUNNING",
        "LOG INFO fake run on w1",
        "STATE COMPLETED",
    ]
    # The job says what failed in public words; the worker's log has the error and traceback.
    assert store.job(raised.job_id).last_error == "INTERNAL: the run failed; the worker's log has its error"
    assert messages(store, raised)[-2:] == [f"LOG ERROR {store.job(raised.job_id).last_error}", "STATE FAILED"]
    assert store.job(refused.job_id).last_error == "NO_BARS: nothing under <path>"
    reason = store.job(exited.job_id).last_error or ""
    assert reason == (
        "INTERNAL: the run's process exited with code 3 without an answer; the worker's log has its last output"
    ), reason
    assert store.job(bad.job_id).last_error == "INTERNAL: the runner returned no run id"
    for job in jobs:
        assert not any("Traceback" in m or "/srv/" in m or "Error" in m for m in messages(store, job))
    assert workers.stop("w1") == 0
    log = (workers.directory / "w1.log").read_text()
    assert f"job {raised.job_id}: FAILED: RuntimeError: boom in /srv/spine/x.py" in log, log
    assert "Traceback (most recent call last)" in log and "exit 3" in log and "'nope', not a run id" in log


def test_cancel_ends_a_running_job_promptly_and_its_process(store: Store, workers: Workers, tmp_path: Path) -> None:
    job = submit(store, "long", {"sleep": 60, "pids": str(tmp_path)})
    workers.start("w1")
    wait_until(lambda: state(store, job) == "RUNNING" and (tmp_path / f"{job.job_id}.pid").exists(), "running", workers)
    pid = pid_of(tmp_path, job)
    assert store.request_cancel(job.job_id, time.time_ns()) == "RUNNING"
    # Promptly: at the next 0.3 s heartbeat; the wait is bounded, not timed (a loaded host is slow).
    wait_until(lambda: state(store, job) == "CANCELLED", "cancelled", workers)
    assert gone(pid)
    assert messages(store, job)[-2:] == ["LOG INFO cancel requested", "STATE CANCELLED"]
    after = submit(store, "after")  # the worker goes on
    wait_until(lambda: state(store, after) == "COMPLETED", "the next job completed", workers)
    assert workers.stop("w1") == 0


def test_a_run_that_ends_itself_on_a_cancel_ends_the_job_cancelled(store: Store, workers: Workers) -> None:
    """The run sees the cancel first (its worker's heartbeat is 30 s away) and then fails, exits
    or even completes: the job ends CANCELLED each time."""
    jobs = [
        submit(store, "raised", {"cancel_self": True, "fail": "CANCELLED: stopped"}),
        submit(store, "exited", {"cancel_self": True, "exit": 3}),
        submit(store, "completed", {"cancel_self": True}),
    ]
    workers.start("w1", SPINE_WORKER_HEARTBEAT_SECS="30", SPINE_WORKER_STALE_SECS="60")
    wait_until(lambda: all(state(store, job) not in ("QUEUED", "RUNNING") for job in jobs), "all ended", workers)
    for job in jobs:
        ended = store.job(job.job_id)
        assert (ended.state, ended.last_error, ended.run_id) == ("CANCELLED", None, None), messages(store, job)
    assert workers.stop("w1") == 0


def test_a_worker_killed_mid_job_leaves_it_to_another(store: Store, workers: Workers, tmp_path: Path) -> None:
    runs = tmp_path / "runs.txt"
    job = submit(store, "killed", {"sleep_first": 60, "pids": str(tmp_path), "runs": str(runs)})
    workers.start("A")
    wait_until(lambda: (tmp_path / f"{job.job_id}.pid").exists(), "running on A", workers)
    pid = pid_of(tmp_path, job)
    workers.kill("A")
    workers.start("B")
    wait_until(lambda: gone(pid), "A's run ended with A", workers, seconds=10)
    wait_until(lambda: state(store, job) == "COMPLETED", "completed on B", workers)
    done = store.job(job.job_id)
    assert (done.worker_id, done.attempts) == ("B", 2)
    assert [line.split()[1::2] for line in runs.read_text().splitlines()] == [["A", "1"], ["B", "2"]]
    assert "LOG WARNING worker A lost during attempt 1 of 2; requeued" in messages(store, job)
    assert workers.stop("B") == 0


def test_a_job_whose_workers_keep_dying_fails_after_two_attempts(
    store: Store, workers: Workers, tmp_path: Path
) -> None:
    job = submit(store, "doomed", {"sleep": 60, "pids": str(tmp_path)})
    pids = tmp_path / f"{job.job_id}.pid"
    for name in ("A", "B"):
        workers.start(name)
        wait_until(lambda: store.job(job.job_id).worker_id == name and pids.exists(), f"running on {name}", workers)
        pid = pid_of(tmp_path, job)
        pids.unlink()
        workers.kill(name)
        wait_until(lambda: gone(pid), f"{name}'s run ended with {name}", workers, seconds=10)
    workers.start("C")
    wait_until(lambda: state(store, job) == "FAILED", "failed", workers)
    assert store.job(job.job_id).last_error == "worker B lost during attempt 2 of 2; gave up after 2 attempts"
    assert workers.stop("C") == 0


def test_a_stopped_worker_hands_its_job_back(store: Store, workers: Workers, tmp_path: Path) -> None:
    job = submit(store, "handed back", {"sleep": 60, "pids": str(tmp_path)})
    workers.start("A")
    wait_until(lambda: (tmp_path / f"{job.job_id}.pid").exists(), "running on A", workers)
    pid = pid_of(tmp_path, job)
    assert workers.stop("A") == 0
    assert gone(pid)
    back = store.job(job.job_id)
    assert (back.state, back.attempts, back.worker_id) == ("QUEUED", 0, None)
    assert messages(store, job)[-2:] == ["LOG WARNING worker A stopped; requeued", "STATE QUEUED"]


def _children(pid: int) -> list[int]:
    """The job processes of worker ``pid``: the processes its fork server forked (not its
    resource tracker, not the server)."""
    return [job for server in _kids(pid, b"forkserver") for job in _kids(server)]


def _kids(pid: int, marked: bytes = b"") -> list[int]:
    """The child processes of ``pid`` whose command line holds ``marked``."""
    found = []
    for tasks in Path(f"/proc/{pid}/task").glob("*/children"):
        for child in tasks.read_text().split():
            try:
                command = Path(f"/proc/{child}/cmdline").read_bytes()
            except FileNotFoundError:
                continue  # it just ended
            if marked in command:
                found.append(int(child))
    return found


def _warmed(directory: Path, job: Job) -> tuple[int, int]:
    warmed_ns, pid = (directory / f"{job.job_id}.warmed").read_text().split()
    return int(warmed_ns), int(pid)


def test_each_job_runs_in_a_fresh_process_warmed_before_it_was_submitted(
    store: Store, workers: Workers, tmp_path: Path
) -> None:
    process = workers.start("w1", FAKE_RUNNER_WARMED=str(tmp_path))

    def warmed_standby() -> int:
        """The standby's pid, once it says it is warm."""
        wait_until(
            lambda: len(standbys := _children(process.pid)) == 1 and (tmp_path / f"{standbys[0]}.warm").exists(),
            "a warmed standby process",
            workers,
        )
        return _children(process.pid)[0]

    standby = warmed_standby()
    submitted = time.time_ns()
    first = submit(store, "first", {"warmed": str(tmp_path)})
    wait_until(lambda: state(store, first) == "COMPLETED", "first completed", workers)
    warmed_ns, pid = _warmed(tmp_path, first)
    assert pid == standby and warmed_ns < submitted
    # The next standby was started as the first job was handed over: the second job too runs
    # in a fresh process warmed before it was submitted.
    standby = warmed_standby()
    submitted = time.time_ns()
    second = submit(store, "second", {"warmed": str(tmp_path)})
    wait_until(lambda: state(store, second) == "COMPLETED", "second completed", workers)
    warmed_ns, again = _warmed(tmp_path, second)
    assert again == standby != pid and warmed_ns < submitted


def test_a_standby_that_died_is_replaced_and_the_job_runs(store: Store, workers: Workers, tmp_path: Path) -> None:
    process = workers.start("w1")
    workers.ready("w1")
    wait_until(lambda: len(_children(process.pid)) == 1, "a standby process", workers)
    os.kill(_children(process.pid)[0], signal.SIGKILL)
    job = submit(store, "after", {"warmed": str(tmp_path)})
    wait_until(lambda: state(store, job) == "COMPLETED", "completed in a fresh process", workers)


def test_a_runner_that_fails_to_warm_fails_the_job_it_is_given(store: Store, workers: Workers) -> None:
    """The standby's import or ``warm()`` failing is reported with the job it is handed: FAILED
    with the public reason, the error in the worker's log; the next job meets the same."""
    workers.start("w1", FAKE_RUNNER_WARM_FAILS="no framework in /srv/spine/lib")
    first, second = submit(store, "first"), submit(store, "second")
    wait_until(lambda: all(state(store, j) == "FAILED" for j in (first, second)), "both failed", workers)
    for job in (first, second):
        assert store.job(job.job_id).last_error == INTERNAL_RUN
    assert "RuntimeError: no framework in /srv/spine/lib" in workers.output()


def children_of(pid: int) -> list[int]:
    """The processes ``pid`` started, from any of its threads."""
    return [int(c) for task in Path(f"/proc/{pid}/task").iterdir() for c in (task / "children").read_text().split()]


def test_a_worker_stopped_while_its_fork_server_still_imports_stops_at_once(workers: Workers) -> None:
    """A stop asked while the first standby's fork server still imports the framework (here a
    warm of 10 minutes: a host far too busy) ends the worker at once, cleanly, its fork server
    killed rather than waited for."""
    process = workers.start("w1", FAKE_RUNNER_WARM_SECS="600")
    workers.ready("w1")
    wait_until(lambda: bool(children_of(process.pid)), "the fork server started", workers)
    server = children_of(process.pid)
    assert workers.stop("w1") == 0, workers.output()  # within the stop's bound, not the import's 600 s
    assert all(gone(pid) for pid in server)
    assert "stopped" in workers.output()
