"""Wakes the gateway's live job streams when their jobs change, at one database query per tick
however many streams wait.

The workers write a job's events from other processes, so the gateway looks: while any stream
waits, one poller reads the last sequence and state of every watched job each ``poll_secs``
(one query, in a thread) and marks each stream whose job moved past what it has read or
changed state. Writes made in this process (a cancel) mark their streams at once through
:meth:`JobStreams.notify`.
A stream reads the events itself once its waiter says the job moved; a job that did not
change costs its stream nothing but a look at a flag each ``poll_secs`` (a flag, not a future
another task resolves: Granian resumes a handler awaiting one only at the loop's next timer).
At most ``limit`` streams wait at once (the route answers 503 SUBSCRIBERS_FULL beyond).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

__all__ = ["JobStreams", "Waiter"]

log = logging.getLogger("spine.gateway")

#: ``{job_id: (last_sequence, state)}`` of the jobs named (``spine.jobs.Store.job_positions``).
Positions = Callable[[Sequence[str]], dict[str, tuple[int, str]]]


class Waiter:
    """One stream's interest in one job: ``known`` is the last sequence it has read; ``state``
    the job's state as last seen; ``moved`` is set when the job moved past ``known`` or changed
    state, and cleared by the stream as it reads."""

    def __init__(self, job_id: str) -> None:
        self.job_id = job_id
        self.known = 0
        self.state: str | None = None
        self.moved = False


class JobStreams:
    def __init__(self, positions: Positions, poll_secs: float, limit: int) -> None:
        self._positions = positions
        self.poll_secs = poll_secs
        self.limit = limit
        self._waiters: dict[str, set[Waiter]] = {}
        self._task: asyncio.Task[None] | None = None
        #: Streams refused at the cap since start.
        self.refused = 0

    @property
    def open(self) -> int:
        return sum(len(waiters) for waiters in self._waiters.values())

    def full(self) -> bool:
        """Whether a new stream would pass the cap (counted as refused when it does)."""
        if self.open >= self.limit:
            self.refused += 1
            return True
        return False

    @contextmanager
    def watching(self, job_id: str) -> Iterator[Waiter]:
        """A waiter on ``job_id`` for the block's duration; the poller runs while any waits."""
        waiter = Waiter(job_id)
        self._waiters.setdefault(job_id, set()).add(waiter)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())
        try:
            yield waiter
        finally:
            waiters = self._waiters.get(job_id)
            if waiters is not None:
                waiters.discard(waiter)
                if not waiters:
                    del self._waiters[job_id]

    def notify(self, job_id: str) -> None:
        """This process wrote to ``job_id``: wake its streams now."""
        for waiter in list(self._waiters.get(job_id, ())):
            waiter.moved = True

    async def tick(self) -> None:
        """One look at every watched job (one query); wakes the streams behind their job."""
        if not self._waiters:
            return
        positions = await asyncio.to_thread(self._positions, list(self._waiters))
        for job_id, (sequence, state) in positions.items():
            for waiter in list(self._waiters.get(job_id, ())):
                if sequence > waiter.known or state != waiter.state:
                    waiter.state, waiter.moved = state, True

    async def _run(self) -> None:
        while self._waiters:
            try:
                await self.tick()
            except Exception:  # noqa: BLE001 - a database hiccup: the next tick tries again
                log.warning("the job streams' look at the database failed; retrying", exc_info=True)
            await asyncio.sleep(self.poll_secs)

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
