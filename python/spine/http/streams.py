"""One SSE response fed by the fan-out hub in push mode.

The hub hands each stream everything it has pending once per event-loop turn in which events
reached it, and the stream writes that in one send, there and then: no task wakes per
subscriber per event, and a burst published in one turn leaves in one write. The response's
own task only waits for the client to leave, and sends a heartbeat after ``heartbeat_secs``
without a write.

A client that stops reading is held back, so that it loses its own oldest events (the hub's
bounded queue) instead of growing the node's memory: Granian's transport would queue every
send without bound, so every ``CHECK_BYTES`` handed to it the stream reads its connection's
kernel send queue (``spine.http.send_queue``); at ``BEHIND_BYTES`` unsent it stops taking
events and looks again after ``RETRY_SECS`` (backing off while it stays behind). A v1 backlog
(a resumed client's replay) goes out the same way, a piece of about ``CHECK_BYTES`` at a time.

Writing inside the hub's flush relies on Granian's RSGI stream transport taking the bytes at
once (since Granian 2.0 ``send_bytes`` queues them and returns an already-complete
awaitable). A send that does not complete at once, or fails, ends the stream.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Protocol

import msgspec

from spine._core import WIRE_VERSION
from spine.fanout import Subscription
from spine.http.errors import HttpError
from spine.http.request import Query
from spine.http.routes import Stream
from spine.http.send_queue import SendQueue
from spine.http.v1 import V1_VERSION
from spine.wire.bar_types import BAR_CHANNELS, BAR_RESOLUTIONS, bar_kind

__all__ = ["SSE", "TICK_KINDS", "Egress", "Pieces", "Resyncs", "heartbeat", "market_kinds", "pump"]

log = logging.getLogger("spine.http")
SSE = [("content-type", "text/event-stream"), ("cache-control", "no-cache"), ("x-accel-buffering", "no")]
_encode = msgspec.json.Encoder().encode
#: Bytes handed to the transport between two looks at the connection's send queue.
CHECK_BYTES = 64 * 1024
#: Unsent bytes at which a client counts as not keeping up (its window is full by then).
BEHIND_BYTES = 256 * 1024
#: How soon a held stream looks again; each look that finds it still behind doubles the wait,
#: up to ``RETRY_MAX_SECS`` (a thousand stalled clients must not keep the loop busy).
RETRY_SECS = 0.05
RETRY_MAX_SECS = 1.0


#: The hub kind of each tick stream's events (a bar's is :func:`~spine.wire.bar_types.bar_kind`).
TICK_KINDS: dict[Stream, str] = {"quotes": "quote", "trades": "trade"}


def market_kinds(stream: Stream | None, query: Query) -> list[str]:
    """The hub kinds a market stream (bars, quotes, trades) keeps for ``query``: its
    ``resolution`` and ``channel`` filters on the bar stream, checked (400 INVALID_PARAMETER)
    as every process that serves the stream checks them."""
    if stream in TICK_KINDS:
        return [TICK_KINDS[stream]]
    resolution = query.choice("resolution", BAR_RESOLUTIONS)
    channel = query.choice("channel", BAR_CHANNELS)
    if resolution == "1s" and channel == "EXTERNAL":
        raise HttpError(
            "INVALID_PARAMETER",
            "resolution=1s with channel=EXTERNAL never matches: the 1s tier is INTERNAL only (aggregated from trades)",
        )
    return [
        bar_kind(r, c)
        for r in ([resolution] if resolution else BAR_RESOLUTIONS)
        for c in ([channel] if channel else BAR_CHANNELS)
    ]


class Resyncs(Protocol):
    """What a v1 stream's events come from (the node's journal): the ``event: resync`` frame a
    stream sends when its queue dropped events, so its client re-reads state."""

    def resync(self, requested: int | None, reason: str) -> bytes:
        """``event: resync`` for a client that asked from ``requested`` (None: live only)."""


class Egress:
    """What a process's streams sent and dropped, over every subscriber it has had. Events are
    counted as SSE frames (each ends with a blank line; data lines are JSON without raw
    newlines), heartbeats included. Drops happen in the hub's queues, where a held subscriber's
    stream does not look until it writes again, so a document also collects the drops of every
    stream still open."""

    __slots__ = ("bytes_sent", "events_dropped", "events_sent", "open")

    def __init__(self) -> None:
        self.events_sent = self.bytes_sent = self.events_dropped = 0
        #: The streams counted here that are still open.
        self.open: set[_Stream] = set()

    def document(self) -> dict[str, int]:
        for stream in self.open:
            stream.count_dropped()
        return {"events_sent": self.events_sent, "bytes_sent": self.bytes_sent, "events_dropped": self.events_dropped}


class _Stream:
    """The sink the hub pushes to: one write per call (a v1 stream first announces events
    its queue dropped with a resync; a lossless stream ends instead, see :func:`pump`)."""

    __slots__ = (
        "counted",
        "dropped",
        "egress",
        "ended",
        "handed",
        "held",
        "journal",
        "last",
        "loop",
        "lossless",
        "probe",
        "retry",
        "subscription",
        "transport",
    )

    def __init__(
        self,
        transport: Any,
        subscription: Subscription,
        journal: Resyncs | None,
        probe: SendQueue | None,
        egress: Egress | None = None,
        lossless: bool = False,
    ) -> None:
        self.transport, self.subscription, self.journal, self.probe = transport, subscription, journal, probe
        self.egress, self.lossless = egress, lossless
        #: Drops the stream has seen (its resync or end), and drops counted as egress.
        self.dropped = self.handed = self.counted = 0
        self.last = time.monotonic()
        self.loop = asyncio.get_running_loop()
        self.ended: asyncio.Future[None] = self.loop.create_future()
        self.held: asyncio.TimerHandle | None = None
        self.retry = RETRY_SECS
        if egress is not None:
            egress.open.add(self)

    def ready(self) -> bool:
        """May the hub hand this stream its events now? No while its client is behind."""
        if self.held is not None:
            return False
        if self.probe is None or self.handed < CHECK_BYTES:
            return True
        if self.probe.unsent() < BEHIND_BYTES:
            self.handed, self.retry = 0, RETRY_SECS
            return True
        self.held = self.loop.call_later(self.retry, self._look_again)
        self.retry = min(2 * self.retry, RETRY_MAX_SECS)
        return False

    def held_for(self) -> float:
        """Seconds until a held stream looks at its client again (0 when not held)."""
        return 0.0 if self.held is None else max(0.0, self.held.when() - self.loop.time())

    def _look_again(self) -> None:
        self.held = None
        self.subscription.resume()

    def send(self, chunk: bytes) -> None:
        if self.ended.done():
            return
        lost = self._lost()
        if self.journal is not None and lost:
            chunk = self.journal.resync(None, "EVENTS_DROPPED") + chunk
        elif self.lossless and lost:
            self.end()  # the client's view has a hole: it reconnects and starts afresh
            return
        try:
            next(self.transport.send_bytes(chunk).__await__())
        except StopIteration:  # taken
            self.last = time.monotonic()
            self.handed += len(chunk)
            if self.egress is not None:
                self.egress.bytes_sent += len(chunk)
                self.egress.events_sent += chunk.count(b"\n\n")
            return
        except Exception:  # noqa: BLE001 - the client went away mid-send
            log.debug("stream send failed; the stream is ended", exc_info=True)
            self.end()
            return
        log.error("the stream transport did not take a send at once; the stream is ended")
        self.end()

    def count_dropped(self) -> int:
        """The queue's drops so far, those not yet counted added to the egress drops (a
        health document may count them before the stream looks)."""
        dropped: int = self.subscription.stats()["dropped"]
        if dropped > self.counted and self.egress is not None:
            self.egress.events_dropped += dropped - self.counted
        self.counted = max(self.counted, dropped)
        return dropped

    def _lost(self) -> bool:
        """Whether the queue dropped events since the stream last looked (a v1 stream then
        sends a resync, a lossless one ends): its own mark, apart from the egress count."""
        dropped = self.count_dropped()
        if dropped <= self.dropped:
            return False
        self.dropped = dropped
        return True

    def end(self) -> None:
        if not self.ended.done():
            self.ended.set_result(None)
            if self.egress is not None:
                self.count_dropped()
                self.egress.open.discard(self)
        if self.held is not None:
            self.held.cancel()
            self.held = None
        self.subscription.close()


class Pieces(Protocol):
    """What a stream sends before its live events (a v1 backlog, a screener snapshot)."""

    def take(self, size: int) -> bytes:
        """The next whole frames, about ``size`` bytes of them; ``b""`` when all are taken."""


async def pump(
    proto: Any,
    subscription: Subscription,
    first: Pieces | None,
    journal: Resyncs | None,
    heartbeat_secs: float,
    probe: SendQueue | None = None,
    *,
    egress: Egress | None = None,
    lossless: bool = False,
) -> None:
    """Serve one stream: ``first`` (a v1 backlog, a snapshot, or nothing), then whatever the hub
    pushes, until the client leaves; ``probe`` reads its connection's send queue. ``egress``
    counts what was sent and dropped. A ``lossless`` stream ends once its queue has dropped an
    event (the client's picture would have a hole; it reconnects and starts from a snapshot)."""
    stream = _Stream(proto.response_stream(200, SSE), subscription, journal, probe, egress, lossless)
    disconnected = asyncio.ensure_future(proto.client_disconnect())
    version = V1_VERSION if journal is not None else WIRE_VERSION
    try:
        if first is not None:
            await _replay(stream, first, disconnected)
        subscription.push(stream.send, stream.ready)
        while not (disconnected.done() or stream.ended.done()):
            quiet = time.monotonic() - stream.last
            if quiet >= heartbeat_secs:
                if stream.held is None:
                    stream.send(heartbeat(version))
                    continue
                quiet = 0.0  # behind: no heartbeat into a full pipe; wait another period
            await asyncio.wait(
                (disconnected, stream.ended), timeout=heartbeat_secs - quiet, return_when=asyncio.FIRST_COMPLETED
            )
    finally:
        disconnected.cancel()
        stream.end()


async def _replay(stream: _Stream, backlog: Pieces, disconnected: asyncio.Future[None]) -> None:
    """The backlog in pieces of about ``CHECK_BYTES``, each handed over only while the client
    keeps up (as the hub's pushes are); live events wait in the subscription's bounded queue."""
    while not (disconnected.done() or stream.ended.done()):
        if not stream.ready():
            await asyncio.wait(
                (disconnected, stream.ended), timeout=stream.held_for(), return_when=asyncio.FIRST_COMPLETED
            )
            continue
        if not (piece := backlog.take(CHECK_BYTES)):
            return
        stream.send(piece)
        await asyncio.sleep(0)  # one piece per loop turn: the other streams and requests go on


def heartbeat(wire_version: str) -> bytes:
    """``event: heartbeat`` stamped now (``svc.stream_heartbeat``, or ``v1.heartbeat`` on v1)."""
    schema_id = "v1.heartbeat" if wire_version == V1_VERSION else "svc.stream_heartbeat"
    body = {"version": wire_version, "schema_id": schema_id, "schema_version": 1, "ts_event": str(time.time_ns())}
    return b"event: heartbeat\ndata: " + _encode(body) + b"\n\n"
