"""Admission of point-in-time screens: each reads and folds up to 64 instruments' history
(about a second of the screener's CPU, on its one event loop), so at most ``running`` run at
once and ``queued`` wait for a place; one more is refused at once, before it reads anything,
with 503 SCREENS_BUSY and a Retry-After of the queue's expected wait. Running them one or two at
a time also bounds the memory they hold (a fresh universe and its history each).

The counters are the ``point_in_time_screens`` block of the screener's ``svc.health``."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from spine.http.errors import HttpError

__all__ = ["ScreenGate"]

T = TypeVar("T")
#: The Retry-After of a refusal before any screen has finished (seconds).
FIRST_RETRY_SECS = 1


class ScreenGate:
    """See the module docs."""

    def __init__(self, running: int, queued: int) -> None:
        if running < 1 or queued < 0:
            raise ValueError(f"a screen gate runs at least 1 and queues at least 0; got {running} and {queued}")
        self.limit, self.queue = running, queued
        self._places = asyncio.Semaphore(running)
        self.running = self.queued = self.completed = self.refused = 0
        self.last_nanos: int | None = None
        self.total_nanos = 0

    async def run(self, work: Callable[[], Awaitable[T]]) -> T:
        """``work()`` once a place is free; :class:`HttpError` SCREENS_BUSY (nothing started)
        when every place and every queue slot is taken."""
        if self.running + self.queued >= self.limit + self.queue:
            self.refused += 1
            raise HttpError(
                "SCREENS_BUSY",
                f"point-in-time screens: {self.running} running and {self.queued} "
                f"waiting, as many as this screener takes ({self.limit} at once, "
                f"{self.queue} waiting); retry after the Retry-After seconds",
                headers=(("retry-after", str(self.retry_after())),),
            )
        self.queued += 1
        try:
            await self._places.acquire()
        finally:
            self.queued -= 1
        self.running += 1
        start = time.monotonic_ns()
        try:
            return await work()
        finally:
            self.running -= 1
            self.completed += 1
            self.last_nanos = time.monotonic_ns() - start
            self.total_nanos += self.last_nanos
            self._places.release()

    def retry_after(self) -> int:
        """Whole seconds until the queue ahead has likely drained: the mean screen's duration
        times the screens ahead, per place."""
        if not self.completed:
            return FIRST_RETRY_SECS
        mean = self.total_nanos / self.completed / 1e9
        return max(1, math.ceil(mean * (self.running + self.queued) / self.limit))

    def document(self) -> dict[str, Any]:
        return {
            "limit": self.limit,
            "queue": self.queue,
            "running": self.running,
            "queued": self.queued,
            "completed": self.completed,
            "refused": self.refused,
            "last_nanos": None if self.last_nanos is None else str(self.last_nanos),
            "total_nanos": str(self.total_nanos),
        }
