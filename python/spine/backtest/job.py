"""The worker child's entry point: one job, one run.

:func:`execute` is the testable core (plan, spec and catalog dirs in, :class:`RunOutputs`
out). :func:`run` is the runner a worker child calls (``spine.backtest.job:run``) with the
claimed job's fields (``spine.jobs.Job.as_dict()``). It opens its own ``spine.jobs.Store``,
builds the plan from the revision's files at the request's parameters, records the
execution block when the engine starts, appends the run's log lines as LOG events, keeps the
``engine_status`` part current as the run moves, polls the job's cancel request (at most
every ``CANCEL_POLL_SECS``), writes every output part and returns the run id. The store is
reached through :class:`RunStore`, the part of the store the run uses.

The job's ``request`` is the gateway's canonical JSON ``{"body": the sealed POST body as
given, "spec": {..., "resolution", "channel", "values"}, "config_hash", "execution": the
configured block less the currency}`` (``spine.gateway.backtests``). The run takes the
body's ``parameters`` (none: the defaults), the spec's resolution and channel, the job's
instrument_id, start and end, the configured execution block (its currency: the
instruments' quote currency), the config_hash; ``run_id`` is over the body as given.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from spine._core import canonical_json
from spine.backtest.api import Execution, RunOutputs, RunSpec
from spine.backtest.engine import run_backtest
from spine.jobs.records import OUTPUT_PARTS
from spine.strategies.plan import StrategyPlan

__all__ = ["CANCEL_POLL_SECS", "RunStore", "execute", "parts", "run", "spec_of"]

CANCEL_POLL_SECS = 0.25


class RunStore(Protocol):
    """What a run needs from the job store (``spine.jobs.Store``)."""

    def revision_texts(self, strategy_id: str, revision_id: str) -> Mapping[str, str]: ...
    def job(self, job_id: str) -> Any: ...
    def append_event(self, job_id: str, type: str, state: str | None, level: str | None, message: str | None,
                     ts: int) -> int: ...
    def set_execution(self, job_id: str, execution: str) -> None: ...
    def put_outputs(self, job_id: str, parts: Mapping[str, Sequence[bytes]]) -> None: ...


def execute(plan: StrategyPlan, spec: RunSpec, catalogs: list[Path], cancelled: Callable[[], bool],
            log: Callable[[str, str], None], status: Callable[[bytes], None] | None = None,
            started: Callable[[dict[str, Any]], None] | None = None) -> RunOutputs:
    """Run one backtest (see :func:`spine.backtest.engine.run_backtest`)."""
    return run_backtest(plan, spec, catalogs, cancelled=cancelled, log=log, status=status, started=started)


def parts(outputs: RunOutputs) -> dict[str, list[bytes]]:
    """The outputs as the store's parts (:data:`spine.jobs.records.OUTPUT_PARTS`; ``report``
    and ``statistics``: one document each)."""
    stored = {"report": [outputs.report], "statistics": [outputs.statistics], "equity": outputs.equity,
              "orders": outputs.orders, "fills": outputs.fills, "positions": outputs.positions,
              "signals": outputs.signals, "markers": outputs.markers, "retirements": outputs.retirements,
              "engine_status": outputs.engine_status}
    assert tuple(stored) == OUTPUT_PARTS
    return stored


def spec_of(job: Mapping[str, Any], request: Mapping[str, Any], plan: StrategyPlan) -> RunSpec:
    """The run spec of a job and its request (see the module docs)."""
    body = dict(request.get("body") or {})
    spec = request.get("spec") or {}
    configured = {key: value for key, value in (request.get("execution") or {}).items()
                  if key in ("capital", "fee_model", "fill_model", "seed")}
    return RunSpec(
        job_id=job["job_id"], strategy_id=job["strategy_id"], revision_id=job["revision_id"],
        instrument_id=job.get("instrument_id"), start=job.get("start"), end=job.get("end"),
        resolution=spec.get("resolution") or body.get("resolution") or plan.resolution,
        channel=spec.get("channel") or body.get("channel") or plan.channel,
        values=dict(plan.values), request=body, config_hash=request.get("config_hash"),
        execution=Execution(**configured),
    )


def _throttled(poll: Callable[[], bool], every: float) -> Callable[[], bool]:
    """``poll`` asked at most once per ``every`` seconds; once true, true for good."""
    state = {"next": 0.0, "set": False}

    def cancelled() -> bool:
        if not state["set"]:
            now = time.monotonic()
            if now >= state["next"]:
                state["next"] = now + every
                state["set"] = bool(poll())
        return bool(state["set"])

    return cancelled


def run(job: dict[str, Any], database_url: str, catalogs: list[str], store: RunStore | None = None) -> str:
    """Run the claimed ``job`` and store its outputs; returns the run id. RunCancelled and
    RunFailed propagate (the worker ends the job from them and logs their public reason), the
    engine status part holding the FAILED document."""
    if store is None:
        from spine.jobs import Store  # type: ignore[attr-defined,unused-ignore]

        with Store(database_url) as opened:
            return run(job, database_url, catalogs, store=opened)
    from spine.strategies.document import plan as plan_of

    job_id, strategy_id, revision_id = job["job_id"], job["strategy_id"], job["revision_id"]
    raw = job["request"]
    request: dict[str, Any] = json.loads(raw) if isinstance(raw, (str, bytes)) else dict(raw)
    files = dict(store.revision_texts(strategy_id, revision_id))
    plan = plan_of(files, (request.get("body") or {}).get("parameters") or {})
    statuses: list[bytes] = []

    def status(document: bytes) -> None:
        statuses.append(document)
        store.put_outputs(job_id, {"engine_status": statuses})

    def log(level: str, message: str) -> None:
        store.append_event(job_id, "LOG", None, level, message, time.time_ns())

    outputs = execute(
        plan, spec_of(job, request, plan), [Path(c) for c in catalogs],
        _throttled(lambda: bool(store.job(job_id).cancel_requested), CANCEL_POLL_SECS), log, status,
        lambda execution: store.set_execution(job_id, canonical_json(execution).decode()),
    )
    store.put_outputs(job_id, parts(outputs))
    return outputs.run_id
