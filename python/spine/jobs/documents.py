"""The wire documents of jobs, from the store's rows: ``svc.run_receipt`` (v2),
``svc.backtest_job_summary``, ``svc.backtest_job_detail`` (v2), ``svc.backtest_job_event``,
and the run a job asked for (``run``, our own: the spec's summary and detail are closed).
Times are stored as integer nanoseconds and served as digit strings. Reasons and messages
pass :func:`spine.reasons.scrub` on the way out: no path, address or traceback is served,
rows a run wrote before that rule included."""

from __future__ import annotations

import json
from typing import Any

from spine.jobs.request import SealedRequest, body_document, decode_stored
from spine.reasons import scrub
from spine.wire.head import head

__all__ = ["detail", "event", "receipt", "request", "run", "summary"]


def _ns(value: int | None) -> str | None:
    return None if value is None else str(value)


def receipt(job: Any, config_hash: str) -> dict[str, Any]:
    return {
        **head("svc.run_receipt", 2),
        "job_id": job.job_id,
        "config_hash": config_hash,
        "state": job.state,
        "submitted_ts": str(job.submitted_ts),
    }


def summary(job: Any) -> dict[str, Any]:
    return {**head("svc.backtest_job_summary"), **_job(job), **_times(job)}


def detail(job: Any) -> dict[str, Any]:
    return {
        **head("svc.backtest_job_detail", 2),
        **_job(job),
        "instrument_id": job.instrument_id,
        "start": str(job.start),
        "end": str(job.end),
        **_times(job),
        "execution": None if job.execution is None else json.loads(job.execution),
        "run_id": job.run_id,
        "last_error": _public(job.last_error),
    }


def _job(job: Any) -> dict[str, Any]:
    """The fields that open a job's summary and detail (in this order, as documents list them)."""
    return _fields(job, "job_id", "strategy_id", "revision_id", "state")


def _fields(row: Any, *names: str) -> dict[str, Any]:
    """``row``'s attributes ``names``, served as stored, in that order."""
    return {name: getattr(row, name) for name in names}


def _times(job: Any) -> dict[str, str | None]:
    """A job's submitted, started and finished times (None until it has them)."""
    return {
        "submitted_ts": str(job.submitted_ts),
        "started_ts": _ns(job.started_ts),
        "finished_ts": _ns(job.finished_ts),
    }


def event(row: Any) -> dict[str, Any]:
    return {
        **head("svc.backtest_job_event"),
        **_fields(row, "job_id", "sequence", "type", "state", "level"),
        "message": _public(row.message),
        "ts_event": str(row.ts_event),
    }


def _public(text: str | None) -> str | None:
    return None if text is None else scrub(text)


def run(job: Any) -> dict[str, Any]:
    """The run ``job`` asked for, from its sealed request: resolution, channel, every
    parameter's value and the label."""
    return _run(decode_stored(job.request))


def request(job: Any) -> dict[str, Any]:
    """``svc.backtest_request``: the body as sealed, the run and the config_hash."""
    sealed = decode_stored(job.request)
    return {
        **head("svc.backtest_request"),
        "job_id": job.job_id,
        "config_hash": sealed.config_hash,
        "body": body_document(sealed),
        "run": _run(sealed),
    }


def _run(sealed: SealedRequest) -> dict[str, Any]:
    spec = sealed.spec
    return {
        "resolution": spec.resolution,
        "channel": spec.channel,
        "parameters": dict(sorted(spec.values.items())),
        "label": sealed.body.label,
    }
