"""The worker child's entry point: one job, one run.

:func:`execute` is the testable core (plan, spec and catalog dirs in, :class:`RunOutputs`
out). :func:`run` is what a worker child calls with the claimed job: it opens the job store,
polls the job's cancel request (at most every ``CANCEL_POLL_SECS``), forwards log lines and
engine status documents to the store as they come, and saves the outputs. The store is
reached through :class:`RunStore`, the seam the job queue implements.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import msgspec

from spine.backtest.api import RunOutputs, RunSpec
from spine.backtest.engine import run_backtest
from spine.strategies.plan import StrategyPlan

__all__ = ["CANCEL_POLL_SECS", "RunStore", "execute", "run"]

CANCEL_POLL_SECS = 0.25


class RunStore(Protocol):
    """What a run needs from the job store."""

    def cancel_requested(self, job_id: str) -> bool: ...
    def append_log(self, job_id: str, level: str, message: str) -> None: ...
    def append_status(self, job_id: str, document: bytes) -> None: ...
    def save_outputs(self, job_id: str, outputs: RunOutputs) -> None: ...


def execute(plan: StrategyPlan, spec: RunSpec, catalogs: list[Path], cancelled: Callable[[], bool],
            log: Callable[[str, str], None], status: Callable[[bytes], None] | None = None) -> RunOutputs:
    """Run one backtest (see :func:`spine.backtest.engine.run_backtest`)."""
    return run_backtest(plan, spec, catalogs, cancelled=cancelled, log=log, status=status)


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
    """Run the claimed ``job`` (``{"plan": StrategyPlan as a JSON object, "spec": RunSpec as a
    JSON object}``) and save its outputs; returns the run_id. RunCancelled and RunFailed
    propagate (the worker records the job's end state from them)."""
    plan = msgspec.convert(job["plan"], StrategyPlan)
    spec = msgspec.convert(job["spec"], RunSpec)
    if store is None:
        from spine.jobs.store import Store  # type: ignore[import-not-found,unused-ignore]

        store = Store(database_url)
    assert store is not None
    job_id = spec.job_id
    outputs = execute(
        plan, spec, [Path(c) for c in catalogs],
        _throttled(lambda: store.cancel_requested(job_id), CANCEL_POLL_SECS),
        lambda level, message: store.append_log(job_id, level, message),
        lambda document: store.append_status(job_id, document),
    )
    store.save_outputs(job_id, outputs)
    return outputs.run_id
