"""Shared pieces of the store and worker tests (tests/unit/jobs, tests/e2e/test_worker_*): a file's hash, a saved strategy, a submitted job, and
records as the documents the routes serve (checked against the schemas)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from spine.jobs import Job, JobEvent, Revision, Store

STRATEGY = "ema_cross"
TOML = '[strategy]\nname = "EMA cross — ü"\n'


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def rid(label: str) -> str:
    """A made-up 64-hex identity."""
    return hashlib.sha256(label.encode()).hexdigest()


def save(store: Store, parent: str | None, label: str, files: dict[str, str] | None = None,
         strategy_id: str = STRATEGY, now: int = 1) -> Revision:
    files = files if files is not None else {"strategy.toml": TOML + f"# {label}\n"}
    return store.save_revision(strategy_id, parent, f"save {label}", [(p, t, sha(t)) for p, t in files.items()],
                               rid(label), ["C000USDT.SIM"], "EMA cross", "ema_cross", now)


def submit(store: Store, label: str, request: dict[str, Any] | None = None, revision: str | None = None,
           now: int = 10) -> Job:
    if revision is None:
        revision = store.strategy(STRATEGY).head_revision_id
    text = json.dumps(request or {}, sort_keys=True, separators=(",", ":"))
    return store.submit(rid("job " + label), STRATEGY, revision, text, None, 1_000, 2_000, now)


def _nanos(value: int | None) -> str | None:
    return None if value is None else str(value)


def event_document(event: JobEvent) -> dict[str, Any]:
    return {"version": "spine.v2", "schema_id": "svc.backtest_job_event", "schema_version": 1,
            "job_id": event.job_id, "sequence": event.sequence, "type": event.type, "state": event.state,
            "level": event.level, "message": event.message, "ts_event": str(event.ts_event)}


def detail_document(job: Job) -> dict[str, Any]:
    return {"version": "spine.v2", "schema_id": "svc.backtest_job_detail", "schema_version": 2,
            "job_id": job.job_id, "strategy_id": job.strategy_id, "revision_id": job.revision_id,
            "state": job.state, "instrument_id": job.instrument_id, "start": str(job.start), "end": str(job.end),
            "submitted_ts": str(job.submitted_ts), "started_ts": _nanos(job.started_ts),
            "finished_ts": _nanos(job.finished_ts),
            "execution": None if job.execution is None else json.loads(job.execution),
            "run_id": job.run_id, "last_error": job.last_error}


def revision_document(revision: Revision) -> dict[str, Any]:
    return {"version": "spine.v2", "schema_id": "svc.strategy_revision", "schema_version": 2,
            "strategy_id": revision.strategy_id, "revision_id": revision.revision_id,
            "parent_revision_id": revision.parent_revision_id, "message": revision.message,
            "files": [{"path": p, "content_hash": h} for p, h in revision.files],
            "instruments": list(revision.instruments), "created_ts": str(revision.created_ts)}
