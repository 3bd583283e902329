"""What the store answers: plain frozen records (the HTTP layer turns them into documents),
the job states and event kinds, and the store's errors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal

from spine.errors import SpineError

__all__ = [
    "AlreadyFinished",
    "EVENT_LEVELS",
    "FINISHED",
    "HeadMoved",
    "Job",
    "JobEvent",
    "JobExists",
    "JobState",
    "LeaseLost",
    "NotFound",
    "Revision",
    "StoreError",
    "Strategy",
    "JOB_STATES",
]

JobState = Literal["QUEUED", "RUNNING", "COMPLETED", "FAILED", "CANCELLED"]
JOB_STATES: Final = ("QUEUED", "RUNNING", "COMPLETED", "FAILED", "CANCELLED")
#: The states a job never leaves.
FINISHED: Final = frozenset({"COMPLETED", "FAILED", "CANCELLED"})
EVENT_LEVELS: Final = ("DEBUG", "INFO", "WARNING", "ERROR")


@dataclass(frozen=True, slots=True)
class Strategy:
    strategy_id: str
    name: str
    template_id: str | None
    head_revision_id: str
    created_ts: int
    updated_ts: int
    #: How many revisions it holds.
    revisions: int


@dataclass(frozen=True, slots=True)
class Revision:
    strategy_id: str
    revision_id: str
    parent_revision_id: str | None
    message: str
    #: ``(path, content_hash)`` sorted by path.
    files: tuple[tuple[str, str], ...]
    instruments: tuple[str, ...]
    created_ts: int


@dataclass(frozen=True, slots=True)
class Job:
    job_id: str
    strategy_id: str
    revision_id: str
    #: The request (:class:`spine.jobs.request.BacktestRequest`) as canonical JSON text.
    request: str
    instrument_id: str | None
    start: int
    end: int
    state: JobState
    submitted_ts: int
    started_ts: int | None
    finished_ts: int | None
    #: The execution block as JSON text, once the run has started.
    execution: str | None
    run_id: str | None
    last_error: str | None
    worker_id: str | None
    heartbeat_ts: int | None
    cancel_requested: bool
    attempts: int
    seq: int

    def as_dict(self) -> dict[str, Any]:
        """Every field by name (what a runner is given)."""
        return {name: getattr(self, name) for name in self.__slots__}


@dataclass(frozen=True, slots=True)
class JobEvent:
    job_id: str
    #: Per job, from 1, consecutive.
    sequence: int
    type: Literal["STATE", "LOG"]
    state: JobState | None
    level: str | None
    message: str | None
    ts_event: int


class StoreError(SpineError):
    """Root of the store's refusals."""

    symbol = "STORE_ERROR"


class NotFound(StoreError, LookupError):
    """No strategy, revision, file or job by that id."""

    symbol = "NOT_FOUND"


class HeadMoved(StoreError):
    """A save named a parent that is not the strategy's head (a first save of a strategy that
    exists; a later save of one that does not: head None). Carries the head and its files,
    so the caller can name the paths changed on both sides."""

    symbol = "STRATEGY_MUTATION_CONFLICT"

    def __init__(self, head_revision_id: str | None, head_files: dict[str, str]) -> None:
        super().__init__(f"{self.symbol}: the head is {head_revision_id}")
        self.head_revision_id = head_revision_id
        self.head_files = head_files


class JobExists(StoreError, ValueError):
    """A job id submitted twice."""

    symbol = "JOB_EXISTS"


class AlreadyFinished(StoreError):
    """Cancel of a job that already ended; ``state`` is how it ended."""

    symbol = "JOB_ALREADY_FINISHED"

    def __init__(self, job_id: str, state: str) -> None:
        super().__init__(f"{self.symbol}: job {job_id} already ended {state}")
        self.state = state


class LeaseLost(StoreError):
    """A worker reported on a job it no longer holds (reaped and requeued, or ended)."""

    symbol = "JOB_LEASE_LOST"
