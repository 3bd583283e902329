"""A stand-in runner for the study tests: it runs no strategy, it scores the request's
parameter values with a known function, so a test knows every trial's objective and the best.

``total_pnl = 1000 - (fast - 7)^2 - (slow - 20)^2`` (exact integer text), at most 1000 at
fast 7 and slow 20. With ``quantity`` in the values it is scaled by it (exact decimal). The
report names ``run_id`` and ``result_hash`` (identities of the values alone, so one set of
values always gives one result_hash), the statistics hold ``total_pnl`` and ``trade_count``
(null ``sharpe``: the objective a study of it cannot score).

Files a test writes to steer the runs, named by the environment (each optional):

* ``STUDY_FAKE_GATE``: while this file exists, a run waits (at most 60 s) before scoring;
* ``STUDY_FAKE_FAIL``: a run whose ``fast`` is the file's text fails;
* ``STUDY_FAKE_LATER``: the "bars" after ``LATER_NS``: a run whose span starts there scores
  ``total_pnl`` plus the file's number (what a holdout run sees, never a training run);
* ``STUDY_FAKE_RUNS``: each run appends ``job_id worker_id fast slow`` to it.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from decimal import Decimal
from typing import Any

from spine.jobs import Store

#: 2024-02-01T00:00:00Z: where the tests' holdout windows start.
LATER_NS = 1_706_745_600_000_000_000


def _text(variable: str) -> str | None:
    path = os.environ.get(variable)
    try:
        return None if path is None else open(path).read().strip()
    except FileNotFoundError:
        return None


def score(values: dict[str, str]) -> Decimal:
    fast, slow = int(values["fast"]), int(values["slow"])
    pnl = Decimal(1000 - (fast - 7) ** 2 - (slow - 20) ** 2)
    return pnl * Decimal(values["quantity"]) if "quantity" in values else pnl


def run(job: dict[str, Any], database_url: str, catalogs: list[str]) -> str:
    request = json.loads(job["request"])
    values = request["spec"]["values"]
    if "STUDY_FAKE_RUNS" in os.environ:
        line = f"{job['job_id']} {job['worker_id']} {values['fast']} {values['slow']}\n".encode()
        descriptor = os.open(os.environ["STUDY_FAKE_RUNS"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(descriptor, line)
        finally:
            os.close(descriptor)
    deadline = time.monotonic() + 60
    while _text("STUDY_FAKE_GATE") is not None and time.monotonic() < deadline:
        time.sleep(0.02)
    if values["fast"] == _text("STUDY_FAKE_FAIL"):
        raise RuntimeError(f"fast {values['fast']} fails here")
    digest = hashlib.sha256(json.dumps(values, sort_keys=True).encode()).hexdigest()
    run_id = hashlib.sha256((job["job_id"] + digest).encode()).hexdigest()
    pnl = score(values)
    if int(request["spec"]["start"]) >= LATER_NS:
        pnl += Decimal(_text("STUDY_FAKE_LATER") or "0")
    report = {"run_id": run_id, "result_hash": digest, "job_id": job["job_id"]}
    statistics = {"total_pnl": str(pnl), "trade_count": 3, "sharpe": None, "spec": request["spec"]}
    with Store(database_url) as store:
        store.set_execution(
            job["job_id"], '{"capital":"100000","currency":"USDT","fee_model":"FAKE","fill_model":"FAKE","seed":0}'
        )
        store.put_outputs(
            job["job_id"],
            {"report": [json.dumps(report).encode()], "statistics": [json.dumps(statistics).encode()]},
        )
    return run_id
