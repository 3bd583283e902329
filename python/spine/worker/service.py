"""The worker's loop: take back jobs whose workers were lost, claim the oldest queued job, run
it in its own process, and finish it.

A job's process is started before its job: the worker keeps one standby process that has
already imported (and warmed) the runner, hands it the next job it claims and starts the next
standby at once, so a job waits for no interpreter start or framework import
(:mod:`spine.worker.child`). Each process still runs one job only. The processes are forked
from the worker's fork server, which imported and warmed the runner once
(:mod:`spine.worker.preload`): a standby costs a fork, not an interpreter and the framework's
import, so back-to-back jobs (a study's trials) do not pay the import each.

While a run's process lives, the worker heartbeats the job every ``heartbeat_secs`` and reads
its cancel flag at each beat: a cancel ends the process (SIGTERM, SIGKILL after
``kill_grace_secs``) and the job CANCELLED (the store ends a cancel-requested job CANCELLED
whatever the run answered). The process' answer decides the end: a run id -> COMPLETED; an
error -> FAILED with its public reason; no answer -> FAILED naming its exit code or signal.
The job's documents carry only public reasons; the error's text and traceback, or the dead
process' last output, go to this worker's log with the line that says how the job ended.

A worker asked to stop (SIGINT, SIGTERM) claims nothing more, ends its run the same way and
hands the job back (QUEUED, the attempt not counted), then exits 0. A worker that dies
without stopping leaves its job to another worker's reap.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import re
import signal
import tempfile
import threading
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from sqlalchemy import exc

from spine.jobs import Job, JobState, LeaseLost, Store
from spine.reasons import INTERNAL_RUN
from spine.worker import child, preload
from spine.worker.config import WorkerConfig

__all__ = ["Worker"]

_SECOND = 1_000_000_000
_RUN_ID = re.compile(r"^[0-9a-f]{64}$")
#: How much of a dead process' output a failure quotes (characters, from its end).
_TAIL = 1_500
#: A finish that fails on a database error is tried this often before the reap takes over.
_FINISH_TRIES = 5
_NO_EXECUTION = "the runner recorded no execution block (Store.set_execution) for its run"


def now_ns() -> int:
    return time.time_ns()


@dataclass
class _Process:
    """A job's process (see the module docs): its pipes and the file its output goes to."""

    process: BaseProcess
    jobs: Connection
    answer: Connection
    output: str

    def close(self) -> None:
        self.jobs.close()
        self.answer.close()
        self.process.close()
        os.unlink(self.output)


class Worker:
    """One worker on ``config``'s store; :meth:`run` until :attr:`stop` is set."""

    def __init__(self, config: WorkerConfig, store: Store | None = None) -> None:
        self.config = config
        self.name = config.name
        self.store = store or Store(config.database_url)
        self.stop = threading.Event()
        #: Absolute: a runner may change its directory.
        self.catalogs = [str(Path(directory).resolve()) for directory in config.catalogs]
        # Each job's process is forked from one server that imported (and warmed) the runner
        # once (spine.worker.preload): a job's process starts with the framework imported.
        os.environ[preload.RUNNER_VARIABLE] = config.runner
        self._context = multiprocessing.get_context("forkserver")
        self._context.set_forkserver_preload(["spine.worker.preload"])
        #: The next job's process, already importing the runner.
        self._standby: _Process | None = None

    def say(self, text: str) -> None:
        print(f"spine worker {self.name}: {text}", flush=True)

    def run(self) -> None:
        """Say it is alive (a thread of its own) and claim and run jobs until :attr:`stop` is
        set; then say it is gone. A database it cannot reach is retried (said once per
        outage), never fatal."""
        beat = threading.Thread(target=self._alive, name="spine-worker-alive", daemon=True)
        beat.start()
        try:
            self._standby = self._first_standby()
            self._loop()
        finally:
            beat.join()
            if self._standby is not None:
                self._end(self._standby.process)
                self._standby.close()
            try:
                self.store.gone(self.name)
            except exc.DBAPIError:
                pass  # its row goes stale on its own

    def _first_standby(self) -> _Process | None:
        """The first standby, started while a stop is still heard. Its fork server imports the
        trading framework first (seconds; far longer on a busy host), and a stop asked
        meanwhile ends the wait at once: the fork server is killed, no standby is kept (None),
        and the worker stops as promptly as it would idle."""
        started: list[_Process] = []
        failed: list[BaseException] = []

        def start() -> None:
            try:
                started.append(self._started())
            except BaseException as error:  # noqa: BLE001 - re-raised below unless stopping
                failed.append(error)

        thread = threading.Thread(target=start, name="spine-worker-standby", daemon=True)
        thread.start()
        while thread.is_alive() and not self.stop.wait(0.05):
            pass
        if thread.is_alive():  # stopping: the fork server's import is not waited for
            _kill_fork_server()
            thread.join(self.config.kill_grace_secs)
        if started:
            return started[0]
        if failed and not self.stop.is_set():
            raise failed[0]
        return None

    def _alive(self) -> None:
        """Every heartbeat until :attr:`stop`: this worker is alive (the gateway's health and
        status read it), whether or not it runs a job."""
        started = now_ns()
        while True:
            try:
                self.store.alive(self.name, started, now_ns())
            except exc.DBAPIError:
                pass  # the claim loop says so; liveness resumes with the database
            if self.stop.wait(self.config.heartbeat_secs):
                return

    def _loop(self) -> None:
        last_reap = float("-inf")
        outage = False
        while not self.stop.is_set():
            try:
                if time.monotonic() - last_reap >= self.config.heartbeat_secs:
                    last_reap = time.monotonic()
                    for job_id in self.store.reap(
                        now_ns(), int(self.config.stale_secs * _SECOND), self.config.max_attempts
                    ):
                        self.say(f"job {job_id}: its worker was lost; now {self.store.job(job_id).state}")
                job = self.store.claim(self.name, now_ns())
                outage = False
            except exc.DBAPIError as error:
                if not outage:
                    self.say(f"database error, retrying: {error.orig}")
                outage = True
                self.stop.wait(min(1.0, self.config.stale_secs / 4))
                continue
            if job is None:
                self.stop.wait(self.config.poll_secs)
                continue
            self.say(f"job {job.job_id}: RUNNING (attempt {job.attempts})")
            try:
                state = self._run(job)
            except exc.DBAPIError as error:
                state = f"left to the reap: database error: {error.orig}"
            self.say(f"job {job.job_id}: {state}")

    def _started(self) -> _Process:
        """A job's process, started: it imports the runner and waits for its job."""
        descriptor, output = tempfile.mkstemp(prefix="spine-job-", suffix=".log")
        os.close(descriptor)
        job_receiver, job_sender = self._context.Pipe(duplex=False)
        answer_receiver, answer_sender = self._context.Pipe(duplex=False)
        process = self._context.Process(
            target=child.main,
            name="spine-job",
            daemon=False,
            args=(self.config.runner, self.store.url, self.catalogs, output, job_receiver, answer_sender),
        )
        process.start()
        job_receiver.close()
        answer_sender.close()
        return _Process(process, job_sender, answer_receiver, output)

    def _run(self, job: Job) -> str:
        """Run ``job`` in the standby process to its end, the next standby starting meanwhile;
        how it ended."""
        taken = self._standby if self._standby is not None and self._standby.process.is_alive() else None
        if taken is None and self._standby is not None:
            self._standby.close()  # it died waiting (its output says why; it had no job)
        taken = taken or self._started()
        self._standby = None
        try:
            try:
                taken.jobs.send(job.as_dict())
            except OSError:  # it died as it was handed the job: a fresh one takes it
                self._end(taken.process)
                taken.close()
                taken = self._started()
                taken.jobs.send(job.as_dict())
            self._standby = self._started()
            return self._watch(job, taken.process, taken.answer, taken.output)
        finally:
            if taken.process.is_alive():
                self._end(taken.process)
            taken.close()

    def _watch(self, job: Job, process: BaseProcess, receiver: Connection, output: str) -> str:
        answer: tuple[Any, ...] | None = None
        listening = True  # until the answer came, or the pipe closed without one
        beat = time.monotonic() + self.config.heartbeat_secs
        while True:
            timeout = max(0.0, min(beat - time.monotonic(), self.config.poll_secs))
            ready = wait([receiver, process.sentinel] if listening else [process.sentinel], timeout)
            if listening and (receiver in ready or not process.is_alive()) and receiver.poll():
                listening = False
                try:
                    answer = receiver.recv()
                except (EOFError, OSError):
                    pass
            if answer is not None and process.is_alive():
                process.join(self.config.kill_grace_secs)  # it answered: exiting now
                if process.is_alive():
                    self._end(process)
            if not process.is_alive():
                break
            if self.stop.is_set():
                self._end(process)
                return self._release(job)
            if time.monotonic() >= beat:
                beat = time.monotonic() + self.config.heartbeat_secs
                try:
                    cancel = self.store.heartbeat(job.job_id, self.name, now_ns())
                except LeaseLost:
                    self._end(process)
                    return "taken back by the queue (this worker's heartbeats went stale)"
                except exc.DBAPIError as error:
                    self.say(f"job {job.job_id}: heartbeat failed, retrying: {error.orig}")
                    continue
                if cancel:
                    self._end(process)
                    return self._finish(job, "CANCELLED", None, None)
        process.join()
        if answer is None and self.stop.is_set():
            return self._release(job)  # a Ctrl-C reached the run's process before it ignored it
        return self._conclude(job, process, answer, output)

    def _conclude(self, job: Job, process: BaseProcess, answer: tuple[Any, ...] | None, output: str) -> str:
        """End the job by the run's answer. The job gets a public reason (a wire symbol and a
        plain text); what the operator needs (the error, its traceback, the process' last
        output) goes to this worker's log, and the returned line says why."""
        if answer is not None and answer[0] == "ok":
            run_id = answer[1]
            if isinstance(run_id, str) and _RUN_ID.match(run_id):
                if self.store.job(job.job_id).execution is None:
                    return self._fail(job, f"INTERNAL: {_NO_EXECUTION}", _NO_EXECUTION)
                return self._finish(job, "COMPLETED", run_id, None)
            return self._fail(
                job,
                "INTERNAL: the runner returned no run id",
                f"the runner returned {run_id!r:.100}, not a run id (64 lowercase hex digits)",
            )
        if answer is not None and answer[0] == "error":
            public, detail, trace = (str(part) for part in answer[1:4])
            return self._fail(job, public or INTERNAL_RUN, detail, trace)
        tail = _tail(output)
        ended = f"the run's process {_exit_text(process.exitcode)} without an answer"
        return self._fail(
            job,
            f"INTERNAL: {ended}; the worker's log has its last output",
            ended,
            f"its last output:\n{tail}" if tail else "it wrote nothing",
        )

    def _fail(self, job: Job, public: str, detail: str, trace: str = "") -> str:
        """FAILED with ``public`` as the job's reason (and its ERROR event); ``detail`` and
        ``trace`` to this worker's log only."""
        if trace:
            self.say(f"job {job.job_id}: " + "\n    ".join(trace.rstrip().splitlines()))
        self._log(job, "ERROR", public)
        state = self._finish(job, "FAILED", None, public)
        return f"{state}: {detail}" if state == "FAILED" else f"{state} (the run's own end: {detail})"

    def _end(self, process: BaseProcess) -> None:
        """SIGTERM, then SIGKILL after the grace period; waits for it."""
        process.terminate()
        process.join(self.config.kill_grace_secs)
        if process.is_alive():
            process.kill()
            process.join()

    def _finish(self, job: Job, state: JobState, run_id: str | None, error: str | None) -> str:
        for attempt in range(_FINISH_TRIES):
            try:
                return self.store.finish(job.job_id, self.name, state, run_id, error, now_ns()).state
            except LeaseLost:
                return f"not {state}: the queue took it back first"
            except exc.DBAPIError as failure:
                self.say(f"job {job.job_id}: finishing {state} failed (try {attempt + 1}): {failure.orig}")
                self.stop.wait(0.5 * (attempt + 1))
        return f"not {state}: the database is unreachable; the reap will take it back"

    def _release(self, job: Job) -> str:
        try:
            state: str = self.store.release(job.job_id, self.name, f"worker {self.name} stopped", now_ns())
        except (LeaseLost, exc.DBAPIError) as error:
            return f"not released ({error}); the reap will take it back"
        return state

    def _log(self, job: Job, level: str, message: str) -> None:
        try:
            self.store.append_event(job.job_id, "LOG", None, level, message[-4096:], now_ns())
        except exc.DBAPIError:
            pass


def _exit_text(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


def _tail(output: str) -> str:
    try:
        with open(output, "rb") as file:
            file.seek(0, os.SEEK_END)
            file.seek(max(0, file.tell() - 4 * _TAIL))
            text = file.read().decode(errors="replace").strip()
    except OSError:
        return ""
    return text[-_TAIL:]


def _kill_fork_server() -> None:
    """SIGKILL this process's ``multiprocessing`` fork server, if one runs: a start waiting on
    it then fails at once. (CPython keeps its pid on the module's server object.)"""
    from multiprocessing import forkserver

    pid = getattr(getattr(forkserver, "_forkserver", None), "_forkserver_pid", None)
    if pid:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
