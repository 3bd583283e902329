"""A stand-in runner for the worker tests (the runner contract of spine.worker.child), doing
what its request asks. Request keys, all optional:

* ``sleep``: seconds to run; ``sleep_first``: seconds on the first attempt only;
* ``fail``: raise RuntimeError with this text; ``refuse``: raise a SpineError with this text;
  ``exit``: leave the process with this code (after writing ``exit <code>`` to stderr),
  answering nothing;
* ``bad_run_id``: return this instead of a run id;
* ``cancel_self``: request the job's cancel as it starts (a run that sees the flag first);
* ``runs``: a file each run appends ``job_id worker_id pid attempt`` to (one write, O_APPEND);
* ``pids``: a directory the run writes ``<job_id>.pid`` into once it has logged its start;
* ``warmed``: a directory the run writes ``<job_id>.warmed`` into: when its process was warmed
  (``warm()``, wall ns) and its pid.

A run that finishes writes a ``report`` output naming the worker, process and attempt, and
returns sha256(job_id).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from spine.errors import SpineError
from spine.jobs import Store

#: When this process was warmed (wall ns; None: never).
WARMED_NS: int | None = None


def warm() -> None:
    """Note the time; with ``FAKE_RUNNER_WARMED`` set, also write ``<pid>.warm`` into that
    directory (a test waits for it instead of sleeping); with ``FAKE_RUNNER_WARM_FAILS``, raise
    its text instead; ``FAKE_RUNNER_WARM_SECS`` first: sleep that long."""
    global WARMED_NS
    time.sleep(float(os.environ.get("FAKE_RUNNER_WARM_SECS", "0")))  # a host too busy to import
    if "FAKE_RUNNER_WARM_FAILS" in os.environ:
        raise RuntimeError(os.environ["FAKE_RUNNER_WARM_FAILS"])
    WARMED_NS = time.time_ns()
    if "FAKE_RUNNER_WARMED" in os.environ:
        (Path(os.environ["FAKE_RUNNER_WARMED"]) / f"{os.getpid()}.warm").write_text(str(WARMED_NS))


def run(job: dict[str, Any], database_url: str, catalogs: list[str]) -> str:
    request = json.loads(job["request"])
    if "warmed" in request:
        (Path(request["warmed"]) / f"{job['job_id']}.warmed").write_text(f"{WARMED_NS} {os.getpid()}")
    job_id = job["job_id"]
    if "runs" in request:
        line = f"{job_id} {job['worker_id']} {os.getpid()} {job['attempts']}\n".encode()
        descriptor = os.open(request["runs"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(descriptor, line)
        finally:
            os.close(descriptor)
    with Store(database_url) as store:
        store.append_event(
            job_id, "LOG", None, "INFO", f"fake run on {job['worker_id']} over {catalogs}", time.time_ns()
        )
        store.set_execution(
            job_id, '{"capital":"1000000","currency":"USDT","fee_model":"FAKE","fill_model":"FAKE","seed":0}'
        )
        if "pids" in request:  # after its first events, so a test that saw the file sees them too
            (Path(request["pids"]) / f"{job_id}.pid").write_text(str(os.getpid()))
        if request.get("cancel_self"):
            store.request_cancel(job_id, time.time_ns())
        sleep = request.get("sleep_first", 0) if job["attempts"] == 1 else 0
        time.sleep(sleep or request.get("sleep", 0))
        if "refuse" in request:
            raise SpineError(request["refuse"])
        if "fail" in request:
            raise RuntimeError(request["fail"])
        if "exit" in request:
            print(f"exit {request['exit']}", file=sys.stderr, flush=True)
            os._exit(request["exit"])
        if "bad_run_id" in request:
            return str(request["bad_run_id"])
        report = {"attempt": job["attempts"], "job_id": job_id, "pid": os.getpid(), "worker": job["worker_id"]}
        store.put_outputs(job_id, {"report": [json.dumps(report, sort_keys=True, separators=(",", ":")).encode()]})
    return hashlib.sha256(job_id.encode()).hexdigest()
