"""Backtest jobs: the queue half of the store.

States and transitions (each one writes a STATE event in the same transaction)::

    submit          -> QUEUED
    QUEUED  -> RUNNING     claim: the oldest queued job, by one worker (attempts + 1)
    QUEUED  -> CANCELLED   cancel of a queued job, at once
    RUNNING -> COMPLETED   the worker holding it: the runner returned a run id
    RUNNING -> FAILED      the worker holding it: the runner raised or its process died
    RUNNING -> CANCELLED   the worker holding it, once a cancel was requested (whatever the
                           run's own end: it may see the flag before the worker does)
    RUNNING -> QUEUED      reap: its worker's heartbeat went stale (a LOG WARNING first), while
                           attempts < max_attempts; release: its worker was stopped (attempts - 1)
    RUNNING -> FAILED      reap, after max_attempts lost attempts (last_error says so)
    RUNNING -> CANCELLED   reap or release of a job whose cancel was requested

COMPLETED, FAILED and CANCELLED are final. A cancel of a RUNNING job only sets
``cancel_requested``; the worker sees it at its next heartbeat and ends the run.

Claims and reaps lock rows: on PostgreSQL ``SELECT ... FOR UPDATE SKIP LOCKED`` (many workers
on many hosts share one queue, no job is claimed twice); on SQLite the writer's ``BEGIN
IMMEDIATE`` serialises them. Event sequences are per job, from 1, consecutive: each event
increments ``jobs.last_sequence`` (an UPDATE, so PostgreSQL locks the row) and takes the value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlalchemy import Row, delete, exc, insert, select, update
from sqlalchemy.engine import Connection

from spine.jobs.base import Connections
from spine.jobs.records import (
    EVENT_LEVELS,
    FINISHED,
    AlreadyFinished,
    Job,
    JobEvent,
    JobExists,
    JobState,
    LeaseLost,
    NotFound,
)
from spine.jobs.schema import job_events, job_outputs, jobs, meta, revisions
from spine.wire.outputs import OutputPart, output_part

__all__ = ["JobStore", "MAX_MESSAGE"]

#: A LOG message is cut to this many characters (svc.backtest_job_event).
MAX_MESSAGE = 4096
#: Ids per ``IN (...)`` (SQLite's oldest builds bind at most 999 parameters).
_IN_CHUNK = 900


class JobStore(Connections):
    def submit(
        self,
        job_id: str,
        strategy_id: str,
        revision_id: str,
        request: str,
        instrument_id: str | None,
        start: int,
        end: int,
        now: int,
    ) -> Job:
        """Queue a job (``request``: the sealed request as canonical JSON text).

        # Errors
        :class:`NotFound` when the strategy holds no such revision; :class:`JobExists` for a
        job id already taken."""
        try:
            with self._write() as connection:
                if (
                    connection.execute(
                        select(revisions.c.seq).where(
                            revisions.c.strategy_id == strategy_id, revisions.c.revision_id == revision_id
                        )
                    ).first()
                    is None
                ):
                    raise NotFound(f"{NotFound.symbol}: strategy {strategy_id} has no revision {revision_id}")
                seq = connection.execute(
                    update(meta).where(meta.c.key == "job_seq").values(value=meta.c.value + 1).returning(meta.c.value)
                ).scalar_one()
                connection.execute(
                    insert(jobs).values(
                        job_id=job_id,
                        strategy_id=strategy_id,
                        revision_id=revision_id,
                        request=request,
                        instrument_id=instrument_id,
                        start=start,
                        end=end,
                        state="QUEUED",
                        submitted_ts=now,
                        cancel_requested=False,
                        attempts=0,
                        last_sequence=0,
                        seq=seq,
                    )
                )
                _state(connection, job_id, "QUEUED", now)
        except exc.IntegrityError:
            raise JobExists(f"{JobExists.symbol}: job {job_id} was already submitted") from None
        return self.job(job_id)

    def job(self, job_id: str) -> Job:
        """# Errors
        :class:`NotFound` when there is no such job."""
        with self._read() as connection:
            return _job(connection, job_id)

    def jobs(
        self, offset: int = 0, limit: int = 100, strategy_id: str | None = None, state: JobState | None = None
    ) -> list[Job]:
        """Jobs newest first (of one strategy, in one state, when they are named)."""
        query = select(jobs).order_by(jobs.c.seq.desc()).offset(offset).limit(limit)
        if strategy_id is not None:
            query = query.where(jobs.c.strategy_id == strategy_id)
        if state is not None:
            query = query.where(jobs.c.state == state)
        with self._read() as connection:
            return [_record(row) for row in connection.execute(query)]

    def events(self, job_id: str, after_sequence: int = 0, limit: int = 1000) -> list[JobEvent]:
        """A job's events after ``after_sequence``, in order.

        # Errors
        :class:`NotFound` when there is no such job."""
        with self._read() as connection:
            rows = connection.execute(
                select(job_events)
                .where(job_events.c.job_id == job_id, job_events.c.sequence > after_sequence)
                .order_by(job_events.c.sequence)
                .limit(limit)
            ).all()
            if not rows:
                _job(connection, job_id)
        return [
            JobEvent(row.job_id, row.sequence, row.type, row.state, row.level, row.message, row.ts_event)
            for row in rows
        ]

    def job_positions(self, job_ids: Sequence[str]) -> dict[str, tuple[int, str]]:
        """``{job_id: (last event sequence, state)}`` of the jobs named that exist: how live
        streams learn, in one query, which of their jobs moved."""
        positions: dict[str, tuple[int, str]] = {}
        with self._read() as connection:
            for at in range(0, len(job_ids), _IN_CHUNK):
                rows = connection.execute(
                    select(jobs.c.job_id, jobs.c.last_sequence, jobs.c.state).where(
                        jobs.c.job_id.in_(job_ids[at : at + _IN_CHUNK])
                    )
                )
                positions.update((row.job_id, (int(row.last_sequence), row.state)) for row in rows)
        return positions

    def append_event(
        self, job_id: str, type: str, state: str | None, level: str | None, message: str | None, ts: int
    ) -> int:
        """Append a LOG event (``level``, ``message``; the message cut to :data:`MAX_MESSAGE`
        characters); its sequence. STATE events are written by the transitions alone.

        # Errors
        ``ValueError`` for a STATE event, a state given, or a level or message missing;
        :class:`NotFound` when there is no such job."""
        if type != "LOG" or state is not None:
            raise ValueError(
                f"append_event writes LOG events (state None); got type {type!r} state {state!r}: "
                "STATE events come with the transitions"
            )
        if level not in EVENT_LEVELS or message is None:
            raise ValueError(f"a LOG event has a level in {EVENT_LEVELS} and a message; got {level!r}, {message!r}")
        with self._write() as connection:
            return _log(connection, job_id, level, message, ts)

    def request_cancel(self, job_id: str, now: int) -> JobState:
        """Cancel a job: a queued one is CANCELLED at once; a running one is marked, and its
        worker ends it at its next heartbeat. The job's state after.

        # Errors
        :class:`AlreadyFinished` when it already ended; :class:`NotFound` for no such job."""
        with self._write() as connection:
            job = _job(connection, job_id, lock=True)
            if job.state in FINISHED:
                raise AlreadyFinished(job_id, job.state)
            if job.state == "QUEUED":
                _set(connection, job_id, state="CANCELLED", finished_ts=now)
                _state(connection, job_id, "CANCELLED", now)
                return "CANCELLED"
            if not job.cancel_requested:
                _set(connection, job_id, cancel_requested=True)
                _log(connection, job_id, "INFO", "cancel requested", now)
            return job.state

    def put_outputs(self, job_id: str, parts: Mapping[str, Sequence[bytes]]) -> None:
        """Store a run's documents: each part named replaces what the job held under it.

        # Errors
        ``ValueError`` for a part that is no :class:`OutputPart`."""
        unknown = sorted(name for name in parts if output_part(name) is None)
        if unknown:
            raise ValueError(f"unknown output parts {unknown}; allowed {[part.value for part in OutputPart]}")
        with self._write() as connection:
            for name, bodies in parts.items():
                part = _plain(name)
                connection.execute(
                    delete(job_outputs).where(job_outputs.c.job_id == job_id, job_outputs.c.part == part)
                )
                if bodies:
                    connection.execute(
                        insert(job_outputs),
                        [{"job_id": job_id, "part": part, "seq": seq, "body": body} for seq, body in enumerate(bodies)],
                    )

    def outputs(self, job_id: str, part: str, offset: int = 0, limit: int = 1000) -> list[bytes]:
        """A part's documents, in order."""
        with self._read() as connection:
            rows = connection.execute(
                select(job_outputs.c.body)
                .where(job_outputs.c.job_id == job_id, job_outputs.c.part == _plain(part))
                .order_by(job_outputs.c.seq)
                .offset(offset)
                .limit(limit)
            )
            return [bytes(body) for body in rows.scalars()]

    def last_output(self, job_id: str, part: str) -> bytes | None:
        """A part's last document (a run's newest engine status), None when it holds none."""
        with self._read() as connection:
            body = connection.execute(
                select(job_outputs.c.body)
                .where(job_outputs.c.job_id == job_id, job_outputs.c.part == _plain(part))
                .order_by(job_outputs.c.seq.desc())
                .limit(1)
            ).scalar_one_or_none()
        return None if body is None else bytes(body)

    def records(self, part: str, offset: int = 0, limit: int = 1000, job_id: str | None = None) -> list[bytes]:
        """One part's documents over every COMPLETED job (newest job first, each job's in
        order), or over one job's."""
        query = (
            select(job_outputs.c.body)
            .join(jobs, jobs.c.job_id == job_outputs.c.job_id)
            .where(job_outputs.c.part == _plain(part), jobs.c.state == "COMPLETED")
            .order_by(jobs.c.seq.desc(), job_outputs.c.seq)
            .offset(offset)
            .limit(limit)
        )
        if job_id is not None:
            query = query.where(jobs.c.job_id == job_id)
        with self._read() as connection:
            return [bytes(body) for body in connection.execute(query).scalars()]

    def set_execution(self, job_id: str, execution: str) -> None:
        """Record the execution block (JSON text) the run uses."""
        with self._write() as connection:
            _set(connection, job_id, execution=execution)

    # the queue, as workers drive it

    def claim(self, worker_id: str, now: int) -> Job | None:
        """Take the oldest QUEUED job: RUNNING, held by ``worker_id``; None when none is queued."""
        with self._read() as connection:  # a cheap look first: an idle worker takes no write lock
            if connection.execute(select(jobs.c.job_id).where(jobs.c.state == "QUEUED").limit(1)).first() is None:
                return None
        with self._write() as connection:
            job_id = connection.execute(
                select(jobs.c.job_id)
                .where(jobs.c.state == "QUEUED")
                .order_by(jobs.c.seq)
                .limit(1)
                .with_for_update(skip_locked=True)
            ).scalar_one_or_none()
            if job_id is None:
                return None
            _set(
                connection,
                job_id,
                state="RUNNING",
                worker_id=worker_id,
                started_ts=now,
                heartbeat_ts=now,
                attempts=jobs.c.attempts + 1,
            )
            _state(connection, job_id, "RUNNING", now)
            return _job(connection, job_id)

    def heartbeat(self, job_id: str, worker_id: str, now: int) -> bool:
        """The worker holding a job says it is alive; whether a cancel was requested.

        # Errors
        :class:`LeaseLost` when ``worker_id`` no longer holds the job."""
        with self._write() as connection:
            cancel = connection.execute(
                update(jobs)
                .where(jobs.c.job_id == job_id, jobs.c.state == "RUNNING", jobs.c.worker_id == worker_id)
                .values(heartbeat_ts=now)
                .returning(jobs.c.cancel_requested)
            ).scalar()
        if cancel is None:
            raise LeaseLost(f"{LeaseLost.symbol}: worker {worker_id} no longer holds job {job_id}")
        return bool(cancel)

    def finish(
        self, job_id: str, worker_id: str, state: JobState, run_id: str | None, last_error: str | None, now: int
    ) -> Job:
        """End a job the worker holds: COMPLETED (with its run id), FAILED (with a reason) or
        CANCELLED; a job whose cancel was requested ends CANCELLED whatever ``state`` says.

        # Errors
        ``ValueError`` for another state, COMPLETED without a run id or an execution block, or
        FAILED without a reason; :class:`LeaseLost` when ``worker_id`` no longer holds the job."""
        if state not in FINISHED:
            raise ValueError(f"finish ends a job COMPLETED, FAILED or CANCELLED; got {state!r}")
        if state == "COMPLETED" and not run_id:
            raise ValueError("a COMPLETED job names its run id")
        if state == "FAILED" and not last_error:
            raise ValueError("a FAILED job names its reason (last_error)")
        with self._write() as connection:
            job = _job(connection, job_id, lock=True)
            if job.state != "RUNNING" or job.worker_id != worker_id:
                raise LeaseLost(
                    f"{LeaseLost.symbol}: worker {worker_id} no longer holds job {job_id} "
                    f"({job.state}, held by {job.worker_id})"
                )
            if job.cancel_requested:
                # The run may stop on the flag (and report an error) before the worker's own
                # heartbeat sees it, or finish meanwhile: a requested cancel decides the end.
                state, run_id, last_error = "CANCELLED", None, None
            elif state == "COMPLETED" and job.execution is None:
                raise ValueError("a COMPLETED job has its execution block (set_execution) recorded")
            _set(connection, job_id, state=state, run_id=run_id, last_error=last_error, finished_ts=now)
            _state(connection, job_id, state, now)
            return _job(connection, job_id)

    def release(self, job_id: str, worker_id: str, reason: str, now: int) -> JobState:
        """A stopping worker hands a job back: QUEUED again, the attempt not counted (CANCELLED
        when a cancel was requested); its state after.

        # Errors
        :class:`LeaseLost` when ``worker_id`` no longer holds the job."""
        with self._write() as connection:
            job = _job(connection, job_id, lock=True)
            if job.state != "RUNNING" or job.worker_id != worker_id:
                raise LeaseLost(f"{LeaseLost.symbol}: worker {worker_id} no longer holds job {job_id}")
            if job.cancel_requested:
                _set(connection, job_id, state="CANCELLED", finished_ts=now)
                _state(connection, job_id, "CANCELLED", now)
                return "CANCELLED"
            _log(connection, job_id, "WARNING", f"{reason}; requeued", now)
            _requeue(connection, job_id, now, attempts=job.attempts - 1)
            return "QUEUED"

    def reap(self, now: int, stale_after_ns: int, max_attempts: int = 2) -> list[str]:
        """Take back RUNNING jobs whose heartbeat is older than ``stale_after_ns``: QUEUED again
        while fewer than ``max_attempts`` were made, else FAILED (CANCELLED when a cancel was
        requested). The ids taken back, oldest first."""
        cutoff = now - stale_after_ns
        stale = (jobs.c.state == "RUNNING") & (jobs.c.heartbeat_ts < cutoff)
        with self._read() as connection:
            if connection.execute(select(jobs.c.job_id).where(stale).limit(1)).first() is None:
                return []
        reaped = []
        with self._write() as connection:
            for row in connection.execute(
                select(jobs).where(stale).order_by(jobs.c.seq).with_for_update(skip_locked=True)
            ).all():
                job = _record(row)
                lost = f"worker {job.worker_id} lost during attempt {job.attempts} of {max_attempts}"
                if job.cancel_requested:
                    _log(connection, job.job_id, "WARNING", f"{lost}; its cancel ends the job", now)
                    _set(connection, job.job_id, state="CANCELLED", finished_ts=now)
                    _state(connection, job.job_id, "CANCELLED", now)
                elif job.attempts < max_attempts:
                    _log(connection, job.job_id, "WARNING", f"{lost}; requeued", now)
                    _requeue(connection, job.job_id, now, attempts=job.attempts)
                else:
                    error = f"{lost}; gave up after {job.attempts} attempts"
                    _log(connection, job.job_id, "ERROR", error, now)
                    _set(connection, job.job_id, state="FAILED", last_error=error, finished_ts=now)
                    _state(connection, job.job_id, "FAILED", now)
                reaped.append(job.job_id)
        return reaped


def _plain(part: str) -> str:
    """A part's name as plain text: PostgreSQL's driver writes an enum member by its Python
    name (``ENGINE_STATUS``), not its value."""
    return part.value if isinstance(part, OutputPart) else part


def _job(connection: Connection, job_id: str, lock: bool = False) -> Job:
    query = select(jobs).where(jobs.c.job_id == job_id)
    row = connection.execute(query.with_for_update() if lock else query).first()
    if row is None:
        raise NotFound(f"{NotFound.symbol}: no job {job_id}")
    return _record(row)


def _record(row: Row[tuple[object, ...]]) -> Job:
    return Job(
        row.job_id,
        row.strategy_id,
        row.revision_id,
        row.request,
        row.instrument_id,
        row.start,
        row.end,
        row.state,
        row.submitted_ts,
        row.started_ts,
        row.finished_ts,
        row.execution,
        row.run_id,
        row.last_error,
        row.worker_id,
        row.heartbeat_ts,
        bool(row.cancel_requested),
        row.attempts,
        row.seq,
    )


def _set(connection: Connection, job_id: str, **values: object) -> None:
    connection.execute(update(jobs).where(jobs.c.job_id == job_id).values(**values))


def _requeue(connection: Connection, job_id: str, now: int, attempts: int) -> None:
    """Back to QUEUED as if never started: no worker, start, execution or outputs."""
    _set(
        connection,
        job_id,
        state="QUEUED",
        worker_id=None,
        heartbeat_ts=None,
        started_ts=None,
        execution=None,
        attempts=attempts,
    )
    connection.execute(delete(job_outputs).where(job_outputs.c.job_id == job_id))
    _state(connection, job_id, "QUEUED", now)


def _next_sequence(connection: Connection, job_id: str) -> int:
    sequence = connection.execute(
        update(jobs)
        .where(jobs.c.job_id == job_id)
        .values(last_sequence=jobs.c.last_sequence + 1)
        .returning(jobs.c.last_sequence)
    ).scalar()
    if sequence is None:
        raise NotFound(f"{NotFound.symbol}: no job {job_id}")
    return int(sequence)


def _state(connection: Connection, job_id: str, state: JobState, ts: int) -> None:
    connection.execute(
        insert(job_events).values(
            job_id=job_id, sequence=_next_sequence(connection, job_id), type="STATE", state=state, ts_event=ts
        )
    )


def _log(connection: Connection, job_id: str, level: str, message: str, ts: int) -> int:
    sequence = _next_sequence(connection, job_id)
    connection.execute(
        insert(job_events).values(
            job_id=job_id, sequence=sequence, type="LOG", level=level, message=message[:MAX_MESSAGE], ts_event=ts
        )
    )
    return sequence
