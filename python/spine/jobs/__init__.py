"""Strategies, revisions and backtest jobs: the gateway side's store and the workers' queue
(SQLAlchemy Core; SQLite by default, PostgreSQL when configured).

Job states: QUEUED -> RUNNING -> COMPLETED | FAILED | CANCELLED; QUEUED -> CANCELLED;
RUNNING -> QUEUED when its worker is lost or stopped (see :mod:`spine.jobs.queue`).
"""

from __future__ import annotations

from spine.jobs.engine import default_database_url, safe_url
from spine.jobs.records import (
    EVENT_LEVELS,
    FINISHED,
    JOB_STATES,
    OUTPUT_PARTS,
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
from spine.jobs.revisions import StrategyFile
from spine.jobs.store import Store

__all__ = [
    "AlreadyFinished", "EVENT_LEVELS", "FINISHED", "HeadMoved", "JOB_STATES", "Job", "JobEvent", "JobExists",
    "JobState", "LeaseLost", "NotFound", "OUTPUT_PARTS", "Revision", "Store", "StoreError", "Strategy",
    "StrategyFile", "default_database_url", "safe_url",
]
