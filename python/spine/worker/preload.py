"""Imported once by a worker's fork server (``multiprocessing`` ``forkserver``) before it forks
any job's process: it imports the worker's runner (``SPINE_WORKER_PRELOAD_RUNNER``, set by the
worker) and calls its ``warm()``, so every job's process is forked with the trading framework
already imported. The server itself never runs a job: each job still gets a process of its own,
a copy of this pristine one.

Best effort: a runner that cannot be imported or warmed here is imported and warmed again in
the job's process, which reports the failure with the job it fails.
"""

from __future__ import annotations

import os

from spine.worker.config import split_runner

#: The environment variable naming the runner (``module:function``).
RUNNER_VARIABLE = "SPINE_WORKER_PRELOAD_RUNNER"


def _preload() -> None:
    import importlib

    runner = os.environ.get(RUNNER_VARIABLE)
    if not runner:
        return
    try:
        module = importlib.import_module(split_runner(runner)[0])
        warm = getattr(module, "warm", None)
        if callable(warm):
            warm()
    except Exception:  # noqa: BLE001,S110 - the job's process says why (module docs)
        pass


_preload()
