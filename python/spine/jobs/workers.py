"""The workers' half of the store: who is alive, and what the queue holds.

A worker upserts its row every heartbeat from a thread of its own (:meth:`WorkerStore.alive`)
and deletes it when it stops; one whose row is older than the stale bound is taken for lost.
The gateway reads these (and the queue's counts) for its health and status; it never infers
a live worker from a RUNNING job."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import delete, func, select, update

from spine.jobs.base import Connections
from spine.jobs.schema import jobs, workers

__all__ = ["WorkerSeen", "WorkerStore"]


@dataclass(frozen=True, slots=True)
class WorkerSeen:
    worker_id: str
    started_ts: int
    seen_ts: int


class WorkerStore(Connections):
    def alive(self, worker_id: str, started_ts: int, now: int) -> None:
        """``worker_id`` is alive at ``now`` (its row created at the first call)."""
        with self._write() as connection:
            if (
                connection.execute(
                    update(workers).where(workers.c.worker_id == worker_id).values(seen_ts=now, started_ts=started_ts)
                ).rowcount
                == 0
            ):
                connection.execute(
                    self._insert_ignore(workers).values(worker_id=worker_id, started_ts=started_ts, seen_ts=now)
                )

    def gone(self, worker_id: str) -> None:
        """``worker_id`` stopped: it no longer counts as alive."""
        with self._write() as connection:
            connection.execute(delete(workers).where(workers.c.worker_id == worker_id))

    def live_workers(self, now: int, stale_after_ns: int) -> list[WorkerSeen]:
        """The workers seen within ``stale_after_ns`` of ``now``, by id."""
        with self._read() as connection:
            rows = connection.execute(
                select(workers).where(workers.c.seen_ts >= now - stale_after_ns).order_by(workers.c.worker_id)
            ).all()
        return [WorkerSeen(row.worker_id, row.started_ts, row.seen_ts) for row in rows]

    def job_counts(self) -> dict[str, int]:
        """How many jobs are in each state (states with none left out)."""
        with self._read() as connection:
            rows = connection.execute(select(jobs.c.state, func.count()).group_by(jobs.c.state)).all()
        return {str(state): int(count) for state, count in rows}
