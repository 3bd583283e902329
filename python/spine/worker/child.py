"""A job's own process (one per job, since NautilusTrader keeps global state per process),
forked from the worker's fork server (:mod:`spine.worker.preload`). It is started before its
job, as the worker's standby: it imports the configured runner and calls the runner module's optional ``warm()``
(which imports what a run needs: the trading framework takes seconds), then waits for one job
on its pipe, runs it and sends its answer to the worker over another.

The runner contract: ``run(job: dict, database_url: str, catalogs: list[str]) -> str``. It is
given the job's fields (``spine.jobs.Job.as_dict()``: ``request`` is the sealed request's
canonical JSON text), opens its own ``spine.jobs.Store(database_url)``, may append LOG events,
records the execution block with ``set_execution``, writes the run's documents with
``put_outputs`` and returns the run id (64 lowercase hex digits); the worker then finishes the
job COMPLETED with it (FAILED when no execution block was recorded). Whatever it raises fails the job:
``last_error`` is the exception's text when it is a Spine refusal (a ``SpineError`` led by its
wire symbol, written for any reader), else ``INTERNAL: the run failed; ...``
(:func:`spine.reasons.public_reason`); the exception's type, text and traceback go to the
worker's log. A runner that cannot be imported or warmed fails the job it is given the same way.
The worker alone writes STATE events.

The process dies with its worker (its fork server ends with the worker; ``PR_SET_PDEATHSIG``
on Linux and a parent watch everywhere end the process with the server):
a worker killed mid-job leaves no run behind writing into a job that is already requeued.
Its stdout and stderr go to a file the worker reads the end of when the process dies without
an answer. It ignores SIGINT: a Ctrl-C reaches the worker, which ends the run itself. A standby
whose job pipe closes without a job (its worker stopped) exits 0.
"""

from __future__ import annotations

import ctypes
import importlib
import os
import signal
import sys
import threading
import time
import traceback
from multiprocessing.connection import Connection
from typing import Any, Protocol

from spine.reasons import public_reason
from spine.worker.config import split_runner

__all__ = ["Runner", "main"]

#: How long the parent watch sleeps between looks.
_WATCH_SECS = 0.5
#: The most of a runner's error text sent back (the job's ``last_error``).
_MAX_ERROR = 2_000


class Runner(Protocol):
    def __call__(self, job: dict[str, Any], database_url: str, catalogs: list[str]) -> str: ...


def main(
    runner: str,
    database_url: str,
    catalogs: list[str],
    output: str,
    jobs: Connection,
    answer: Connection,
) -> None:
    """The process' target: import and warm ``runner``, wait for a job on ``jobs``, run it;
    send ``("ok", run_id)`` or ``("error", public reason, "Type: text", traceback)`` on
    ``answer``; exit 0 after an answer ok, 1 after an error."""
    _die_with(os.getppid())
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    descriptor = os.open(output, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.dup2(descriptor, 1)
    os.dup2(descriptor, 2)
    os.close(descriptor)
    try:
        run: Runner | BaseException = _warmed(runner)
    except BaseException as error:  # noqa: BLE001 - reported with the job it fails
        run = error
    try:
        job = jobs.recv()
    except (EOFError, OSError):
        os._exit(0)  # no job came: the worker stopped
    _end_with_worker(jobs)
    try:
        if isinstance(run, BaseException):
            raise run
        run_id = run(job, database_url, catalogs)
    except BaseException as error:  # noqa: BLE001 - whatever ends the run is its reason
        trace = traceback.format_exc()
        print(trace, file=sys.stderr, flush=True)
        answer.send(("error", public_reason(error)[:_MAX_ERROR], _chain(error)[:_MAX_ERROR], trace))
        answer.close()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)
    answer.send(("ok", run_id))
    answer.close()
    # Skip interpreter teardown: the answer is sent, and a framework's native threads ending
    # late there can abort the process.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _warmed(runner: str) -> Runner:
    """The runner's function, its module imported and its optional ``warm()`` called."""
    module_name, function = split_runner(runner)
    module = importlib.import_module(module_name)
    warm = getattr(module, "warm", None)
    if callable(warm):
        warm()
    run: Runner = getattr(module, function)
    return run


def _end_with_worker(jobs: Connection) -> None:
    """End this process when the worker ends: once its job came, nothing more is sent on the
    job pipe, whose other end only the worker holds, so the pipe turning readable is its EOF.
    (The fork server, this process' parent, outlives a killed worker while a process it
    forked holds the server's alive pipe: the parent watch alone would not see it go.)"""

    def watch() -> None:
        while not jobs.poll(_WATCH_SECS):
            pass
        os._exit(70)

    threading.Thread(target=watch, name="spine-worker-watch", daemon=True).start()


def _chain(error: BaseException) -> str:
    """``Type: text`` of the error and each error that caused it (for the worker's log)."""
    parts: list[str] = []
    seen: BaseException | None = error
    while seen is not None and len(parts) < 8:
        parts.append(f"{type(seen).__name__}: {seen}")
        seen = seen.__cause__ or seen.__context__
    return " <- ".join(parts)


def _die_with(parent: int) -> None:
    """End this process when ``parent`` ends: the worker's fork server, which ends with the
    worker."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # it ended before the line above took effect
        os._exit(70)

    def watch() -> None:
        while True:
            time.sleep(_WATCH_SECS)
            if os.getppid() != parent:
                os._exit(70)

    threading.Thread(target=watch, name="spine-parent-watch", daemon=True).start()
