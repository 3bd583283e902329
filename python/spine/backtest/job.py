"""The worker child's entry point: one job, one run.

:func:`run` is the runner a worker child calls (``spine.backtest.job:run``) with the claimed
job's fields (``spine.jobs.Job.as_dict()``): it decodes the job's request
(:class:`spine.jobs.request.BacktestRequest`, stored by the gateway fully resolved), opens its
own ``spine.jobs.Store`` and runs it with :func:`run_request`, the one way a request is run.
A row stored before requests carried their plan is planned from its revision first, the only
time a run reads the revision.

:func:`run_request` records the execution block when the engine starts, appends the run's log
lines as LOG events, keeps the ``engine_status`` part current as the run moves, polls the
job's cancel request (at most every ``CANCEL_POLL_SECS``), writes every output part
(:class:`spine.wire.outputs.OutputPart`) and returns the run id. The store is reached through
:class:`RunStore`, the part of the store a run uses.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import msgspec

from spine._core import canonical_json
from spine.backtest.api import Execution, RunOutputs, RunSpec
from spine.backtest.engine import run_backtest
from spine.jobs.request import BacktestRequest, body_document, decode_stored, with_plan
from spine.wire.outputs import OutputPart

__all__ = ["CANCEL_POLL_SECS", "RunStore", "parts", "run", "run_request", "run_spec", "warm"]

CANCEL_POLL_SECS = 0.25


class RunStore(Protocol):
    """What a run needs from the job store (``spine.jobs.Store``)."""

    def revision_texts(self, strategy_id: str, revision_id: str) -> Mapping[str, str]: ...
    def job(self, job_id: str) -> Any: ...
    def append_event(
        self, job_id: str, type: str, state: str | None, level: str | None, message: str | None, ts: int
    ) -> int: ...
    def set_execution(self, job_id: str, execution: str) -> None: ...
    def put_outputs(self, job_id: str, parts: Mapping[str, Sequence[bytes]]) -> None: ...


def parts(outputs: RunOutputs) -> dict[str, list[bytes]]:
    """The outputs by part, each :class:`OutputPart` read from the ``RunOutputs`` field of its
    name (``report`` and ``statistics``: one document each)."""
    stored: dict[str, list[bytes]] = {}
    for part in OutputPart:
        documents: bytes | list[bytes] = getattr(outputs, part.value)
        stored[part.value] = [documents] if isinstance(documents, bytes) else documents
    return stored


def run_spec(job_id: str, request: BacktestRequest) -> RunSpec:
    """What the engine takes for ``request`` run as job ``job_id``: its fields, one to one."""
    spec = request.spec
    return RunSpec(
        job_id=job_id,
        strategy_id=spec.strategy_id,
        revision_id=spec.revision_id,
        instrument_id=spec.instrument_id,
        start=int(spec.start),
        end=int(spec.end),
        resolution=spec.resolution,
        channel=spec.channel,
        values=dict(spec.values),
        request=body_document(request),
        config_hash=request.config_hash,
        execution=Execution(**msgspec.structs.asdict(request.execution)),
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


def run_request(job_id: str, request: BacktestRequest, catalogs: list[Path], store: RunStore) -> str:
    """Run ``request`` as job ``job_id`` on the bars of ``catalogs`` and store its outputs;
    returns the run id. RunCancelled and RunFailed propagate, the engine status part holding
    the FAILED document."""
    statuses: list[bytes] = []

    def status(document: bytes) -> None:
        statuses.append(document)
        store.put_outputs(job_id, {OutputPart.ENGINE_STATUS.value: statuses})

    def log(level: str, message: str) -> None:
        store.append_event(job_id, "LOG", None, level, message, time.time_ns())

    outputs = run_backtest(
        request.plan,
        run_spec(job_id, request),
        catalogs,
        cancelled=_throttled(lambda: bool(store.job(job_id).cancel_requested), CANCEL_POLL_SECS),
        log=log,
        status=status,
        started=lambda execution: store.set_execution(job_id, canonical_json(execution).decode()),
    )
    store.put_outputs(job_id, parts(outputs))
    return outputs.run_id


def warm() -> None:
    """Import what a run needs before its job arrives (a worker's standby process calls it):
    the trading framework's engine, the strategy runtime, the catalog reader and the store,
    seconds that are then off the job's critical path."""
    import nautilus_trader.backtest.engine  # noqa: F401
    import nautilus_trader.persistence.catalog  # noqa: F401

    import spine.backtest.runtime  # noqa: F401
    import spine.jobs.store  # noqa: F401


def run(job: dict[str, Any], database_url: str, catalogs: list[str], store: RunStore | None = None) -> str:
    """Run the claimed ``job`` (see the module docs) and store its outputs; returns the run id.
    RunCancelled and RunFailed propagate (the worker ends the job from them and logs their
    public reason)."""
    if store is None:
        from spine.jobs.store import Store

        with Store(database_url) as opened:
            return run(job, database_url, catalogs, store=opened)
    stored = decode_stored(job["request"])
    request = (
        stored
        if isinstance(stored, BacktestRequest)
        else with_plan(stored, store.revision_texts(stored.spec.strategy_id, stored.spec.revision_id))
    )
    return run_request(job["job_id"], request, [Path(c) for c in catalogs], store)
