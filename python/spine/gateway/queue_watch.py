"""The gateway's watch over the job queue, outside the workers: every ``every`` seconds (in a
thread) it takes back RUNNING jobs whose worker went silent (the store's reap, as a worker
would), and reads which workers are alive and what the queue holds.

So no job stays RUNNING without a live worker beyond ``stale_secs`` plus one look, even when
every worker is gone; and the health says so (``NO_LIVE_WORKER``) while jobs wait with no worker
alive to run them. Health and status read the last look, never the database."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from sqlalchemy import exc

from spine.jobs.store import Store
from spine.jobs.workers import WorkerSeen

__all__ = ["QueueWatch"]

log = logging.getLogger("spine.gateway")

_SECOND = 1_000_000_000


class QueueWatch:
    def __init__(self, store: Store, stale_secs: float, max_attempts: int, every: float) -> None:
        self.store, self.stale_secs, self.max_attempts, self.every = store, stale_secs, max_attempts, every
        self.workers: list[WorkerSeen] = []
        self.counts: dict[str, int] = {}
        #: Jobs taken back by this gateway since it started.
        self.reaped = 0
        #: When the last look finished (ns); None before the first.
        self.checked_ts: int | None = None

    async def run(self, stop: asyncio.Event) -> None:
        """Look every ``every`` seconds until ``stop`` is set."""
        while not stop.is_set():
            try:
                await asyncio.to_thread(self.look)
            except exc.DBAPIError as error:
                log.warning("the job watch could not read the store: %s", error.orig)
            try:
                await asyncio.wait_for(stop.wait(), self.every)
            except TimeoutError:
                pass

    def look(self) -> None:
        now = time.time_ns()
        stale = int(self.stale_secs * _SECOND)
        for job_id in self.store.reap(now, stale, self.max_attempts):
            self.reaped += 1
            log.warning("job %s: its worker went silent; now %s", job_id, self.store.job(job_id).state)
        self.workers = self.store.live_workers(now, stale)
        self.counts = self.store.job_counts()
        self.checked_ts = time.time_ns()

    def degraded_reasons(self) -> list[str]:
        """``NO_LIVE_WORKER`` while jobs are queued or running and no worker is alive."""
        waiting = self.counts.get("QUEUED", 0) + self.counts.get("RUNNING", 0)
        return ["NO_LIVE_WORKER"] if waiting and not self.workers else []

    def document(self) -> dict[str, Any]:
        """The ``workers`` block of the gateway's status."""
        return {
            "live": [
                {"worker_id": w.worker_id, "started_ts": str(w.started_ts), "seen_ts": str(w.seen_ts)}
                for w in self.workers
            ],
            "stale_ms": round(self.stale_secs * 1000),
            "queued": self.counts.get("QUEUED", 0),
            "running": self.counts.get("RUNNING", 0),
            "reaped": self.reaped,
            "checked_ts": None if self.checked_ts is None else str(self.checked_ts),
        }
