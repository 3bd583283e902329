"""Parameter studies: the store's half that keeps each study's definition, state and progress.
The trials themselves live in Optuna's storage (:mod:`spine.studies.storage`).

States and transitions (``docs/contract.md`` lists them for users)::

    create                   -> QUEUED
    QUEUED  -> RUNNING          a scheduler takes it up
    QUEUED | RUNNING -> PAUSED  pause: no trial is asked for; running ones finish
    PAUSED  -> RUNNING          resume
    RUNNING -> COMPLETED        every trial ran, at least one COMPLETE
    RUNNING -> FAILED           every trial ran and failed
    QUEUED | RUNNING | PAUSED -> FAILED   its scheduler cannot run it (its revision gone)
    QUEUED | RUNNING | PAUSED -> CANCELLED   cancel (its running trials' jobs are cancelled)
    COMPLETED | FAILED | PAUSED | RUNNING -> RUNNING   retry of failed trials

CANCELLED is final. Each transition is one conditional UPDATE: of two racing, one wins and
the other is told the state it found (:class:`StudyStateRefused`).

A gateway's scheduler drives the studies it holds the lease of (``owner``, ``lease_ts``):
it renews the lease while it runs them, and another gateway's scheduler takes over one whose
lease went stale. It keeps a study until nothing is left to collect (no trial running).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Final, Literal

from sqlalchemy import Row, and_, insert, or_, select, update

from spine.jobs.base import Connections
from spine.jobs.records import NotFound, StoreError
from spine.jobs.schema import studies

__all__ = ["STUDY_STATES", "Progress", "StudyRecord", "StudyRows", "StudyState", "StudyStateRefused"]

StudyState = Literal["QUEUED", "RUNNING", "PAUSED", "COMPLETED", "FAILED", "CANCELLED"]
STUDY_STATES: Final = ("QUEUED", "RUNNING", "PAUSED", "COMPLETED", "FAILED", "CANCELLED")
#: The states whose studies a scheduler still asks trials for.
ASKING: Final = ("QUEUED", "RUNNING")


class StudyStateRefused(StoreError):
    """A transition the study's state does not allow; ``state`` is the state found."""

    symbol = "CONFLICT"

    def __init__(self, study_id: str, state: str) -> None:
        super().__init__(f"{self.symbol}: study {study_id} is {state}")
        self.state = state


@dataclass(frozen=True, slots=True)
class Progress:
    """What a study's trials came to, as its scheduler last counted."""

    trials: int = 0
    complete: int = 0
    running: int = 0
    waiting: int = 0
    failed: int = 0
    best_trial: int | None = None
    best_value: str | None = None


@dataclass(frozen=True, slots=True)
class StudyRecord:
    study_id: str
    strategy_id: str
    revision_id: str
    #: Canonical JSON text of the definition.
    definition: str
    state: StudyState
    created_ts: int
    updated_ts: int
    last_error: str | None
    progress: Progress
    owner: str | None
    lease_ts: int | None
    holdout_trial: int | None
    holdout_job_id: str | None


class StudyRows(Connections):
    def create_study(self, study_id: str, strategy_id: str, revision_id: str, definition: str, now: int) -> StudyRecord:
        """A new QUEUED study."""
        with self._write() as connection:
            connection.execute(
                insert(studies).values(
                    study_id=study_id,
                    strategy_id=strategy_id,
                    revision_id=revision_id,
                    definition=definition,
                    state="QUEUED",
                    created_ts=now,
                    updated_ts=now,
                    trials=0,
                    complete=0,
                    running=0,
                    waiting=0,
                    failed=0,
                )
            )
        return self.study(study_id)

    def study(self, study_id: str) -> StudyRecord:
        """# Errors
        :class:`NotFound` when there is no such study."""
        with self._read() as connection:
            row = connection.execute(select(studies).where(studies.c.study_id == study_id)).first()
        if row is None:
            raise NotFound(f"{NotFound.symbol}: no study {study_id}")
        return _record(row)

    def studies(
        self, offset: int = 0, limit: int = 100, strategy_id: str | None = None, state: StudyState | None = None
    ) -> list[StudyRecord]:
        """Studies newest first (of one strategy, in one state, when named)."""
        query = select(studies).order_by(studies.c.created_ts.desc(), studies.c.study_id).offset(offset).limit(limit)
        if strategy_id is not None:
            query = query.where(studies.c.strategy_id == strategy_id)
        if state is not None:
            query = query.where(studies.c.state == state)
        with self._read() as connection:
            return [_record(row) for row in connection.execute(query)]

    def move_study(
        self,
        study_id: str,
        sources: Collection[str],
        target: str,
        now: int,
        last_error: str | None = None,
    ) -> StudyRecord:
        """Move the study from one of ``sources`` to ``target`` (a no-op when it is already
        there).

        # Errors
        :class:`NotFound`; :class:`StudyStateRefused` naming the state found otherwise."""
        values: dict[str, Any] = {"state": target, "updated_ts": now}
        if last_error is not None:
            values["last_error"] = last_error
        with self._write() as connection:
            moved = connection.execute(
                update(studies)
                .where(studies.c.study_id == study_id, studies.c.state.in_(tuple(sources)))
                .values(**values)
            ).rowcount
            if not moved:
                state = connection.execute(select(studies.c.state).where(studies.c.study_id == study_id)).scalar()
                if state is None:
                    raise NotFound(f"{NotFound.symbol}: no study {study_id}")
                if state != target:
                    raise StudyStateRefused(study_id, state)
        return self.study(study_id)

    def claim_studies(self, owner: str, now: int, stale_ns: int) -> list[StudyRecord]:
        """The studies ``owner`` drives now: those it holds, and those no live scheduler does
        (never held, or a lease older than ``stale_ns``), among the ones with work left (asking,
        or trials still running). Their lease is renewed at ``now``."""
        work = or_(studies.c.state.in_(ASKING), studies.c.running > 0)
        free = or_(studies.c.owner.is_(None), studies.c.owner == owner, studies.c.lease_ts < now - stale_ns)
        with self._write() as connection:
            ids = (
                connection.execute(select(studies.c.study_id).where(and_(work, free)).with_for_update(skip_locked=True))
                .scalars()
                .all()
            )
            if ids:
                connection.execute(update(studies).where(studies.c.study_id.in_(ids)).values(owner=owner, lease_ts=now))
            rows = connection.execute(select(studies).where(studies.c.study_id.in_(ids))).all() if ids else []
        return [_record(row) for row in rows]

    def record_progress(self, study_id: str, owner: str, progress: Progress, now: int) -> bool:
        """The scheduler's count of the study's trials; False when ``owner`` lost the study."""
        with self._write() as connection:
            return bool(
                connection.execute(
                    update(studies)
                    .where(studies.c.study_id == study_id, studies.c.owner == owner)
                    .values(
                        trials=progress.trials,
                        complete=progress.complete,
                        running=progress.running,
                        waiting=progress.waiting,
                        failed=progress.failed,
                        best_trial=progress.best_trial,
                        best_value=progress.best_value,
                        updated_ts=now,
                    )
                ).rowcount
            )

    def set_holdout(self, study_id: str, trial: int, job_id: str, now: int) -> None:
        """The holdout run of ``trial`` is the job ``job_id``."""
        with self._write() as connection:
            connection.execute(
                update(studies)
                .where(studies.c.study_id == study_id)
                .values(holdout_trial=trial, holdout_job_id=job_id, updated_ts=now)
            )


def _record(row: Row[Any]) -> StudyRecord:
    return StudyRecord(
        study_id=row.study_id,
        strategy_id=row.strategy_id,
        revision_id=row.revision_id,
        definition=row.definition,
        state=row.state,
        created_ts=row.created_ts,
        updated_ts=row.updated_ts,
        last_error=row.last_error,
        progress=Progress(
            row.trials, row.complete, row.running, row.waiting, row.failed, row.best_trial, row.best_value
        ),
        owner=row.owner,
        lease_ts=row.lease_ts,
        holdout_trial=row.holdout_trial,
        holdout_job_id=row.holdout_job_id,
    )
