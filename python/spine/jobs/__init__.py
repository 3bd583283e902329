"""Strategies, revisions and backtest jobs: the gateway side's store and the workers' queue
(SQLAlchemy Core; SQLite by default, PostgreSQL when configured), the typed request a job
carries (:mod:`spine.jobs.request`) and the parts of its outputs (:mod:`spine.wire.outputs`).

Job states: QUEUED -> RUNNING -> COMPLETED | FAILED | CANCELLED; QUEUED -> CANCELLED;
RUNNING -> QUEUED when its worker is lost or stopped (see :mod:`spine.jobs.queue`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from spine.jobs.records import (
    EVENT_LEVELS,
    FINISHED,
    JOB_STATES,
    AlreadyFinished,
    HeadMoved,
    Job,
    JobEvent,
    JobExists,
    JobState,
    LeaseLost,
    NotFound,
    Revision,
    StoreError,
    Strategy,
)
from spine.wire.outputs import OutputPart

if TYPE_CHECKING:
    from spine.jobs.database import default_database_url, safe_url
    from spine.jobs.revision_store import StrategyFile
    from spine.jobs.store import Store

__all__ = [
    "AlreadyFinished",
    "EVENT_LEVELS",
    "FINISHED",
    "HeadMoved",
    "JOB_STATES",
    "Job",
    "JobEvent",
    "JobExists",
    "JobState",
    "LeaseLost",
    "NotFound",
    "OutputPart",
    "Revision",
    "Store",
    "StoreError",
    "Strategy",
    "StrategyFile",
    "default_database_url",
    "safe_url",
]

#: The names whose modules load SQLAlchemy, by module: imported on first use, so a process that
#: reads only the records or the output parts (the route table does) never loads the database layer.
_LAZY = {"default_database_url": "database", "safe_url": "database", "StrategyFile": "revision_store", "Store": "store"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f"spine.jobs.{module}"), name)
