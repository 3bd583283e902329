"""What every SSE server publishes, and how: one-bar ``svc.bar_envelope`` events built and
encoded once per event exactly as the node's actor does (``envelope`` + ``frame``), the bar's
``ts_event`` carrying the publish time so the client can measure delay; one publisher loop
shared by all servers, and the rivals' fan-out (one bounded ``asyncio.Queue`` per subscriber).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from spine.fanout import QUEUE_EVENTS
from spine.wire.projection import envelope, frame

INSTRUMENT = "BTCUSDT.SIM"
BAR_TYPE = f"{INSTRUMENT}-1-MINUTE-LAST-EXTERNAL"
START_NS = 1_740_000_000_000_000_000
COVERAGE = {
    "version": "spine.v2",
    "schema_id": "svc.series_coverage",
    "schema_version": 1,
    "instrument_id": INSTRUMENT,
    "channel": "EXTERNAL",
    "retention_state": "unmanaged",
    "exhausted": False,
    "history_terminal": False,
    "sparse_ok": False,
    "bar_count": 5000,
    "observed": [{"start": str(START_NS), "end": str(START_NS + 5000 * 60 * 10**9)}],
    "gaps": [],
    "newest_close": str(START_NS + 5000 * 60 * 10**9),
    "resume_from": str(START_NS + 5001 * 60 * 10**9),
}


def bar_event(sequence: int) -> bytes:
    """One SSE frame; the bar's ``ts_event`` is the publish time (ns), the first in the frame."""
    row = {
        "sequence": sequence,
        "ts_event": str(time.time_ns()),
        "open": "27001.50",
        "high": "27010.00",
        "low": "26990.50",
        "close": "27005.25",
        "volume": "12.345678",
    }
    document = envelope(
        instrument_id=INSTRUMENT,
        bar_type=BAR_TYPE,
        resolution="1m",
        channel="EXTERNAL",
        bars=[row],
        coverage=COVERAGE,
        withheld=[],
        next_cursor=None,
    )
    return frame("bar", document)


async def publish(offer: Callable[[bytes], Any], rate: float, seconds: float, burst: int = 1) -> int:
    """Offer events for ``seconds``: ``rate`` per second, or flat out (``rate`` 0: ``burst``
    events per event-loop turn, so subscribers' sends interleave with publishing; a venue
    socket read or a minute close hands the node several events in one turn). Returns the
    count."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    sent = 0
    while (now := loop.time()) < start + seconds:
        if rate > 0 and now < start + sent / rate:
            await asyncio.sleep(start + sent / rate - now)
            continue
        if rate > 0:
            sent += 1
            offer(bar_event(sent))
            continue
        for _ in range(burst):
            sent += 1
            offer(bar_event(sent))
        await asyncio.sleep(0)
    return sent


class QueueHub:
    """The rivals' fan-out: one bounded queue per subscriber, the oldest event dropped when
    full (the hub's semantics, written the way a user would with asyncio alone)."""

    def __init__(self) -> None:
        self.queues: set[asyncio.Queue[bytes]] = set()

    def __len__(self) -> int:
        return len(self.queues)

    def subscribe(self) -> asyncio.Queue[bytes]:
        queue: asyncio.Queue[bytes] = asyncio.Queue(QUEUE_EVENTS)
        self.queues.add(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[bytes]) -> None:
        self.queues.discard(queue)

    def publish(self, payload: bytes) -> None:
        for queue in self.queues:
            if queue.full():
                queue.get_nowait()
            queue.put_nowait(payload)


def control_answer(published: int, started: float) -> bytes:
    return b'{"published":%d,"seconds":%.3f}' % (published, time.monotonic() - started)
