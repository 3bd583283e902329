"""One SSE response fed by the fan-out hub in push mode.

The hub hands each stream everything it has pending once per event-loop turn in which events
reached it, and the stream writes that in one send, there and then: no task wakes per
subscriber per event, and a burst published in one turn leaves in one write. The response's
own task only waits for the client to leave, and sends a heartbeat after ``heartbeat_secs``
without a write.

Writing inside the hub's flush relies on Granian's RSGI stream transport taking the bytes at
once (since Granian 2.0 ``send_bytes`` queues them and returns an already-complete
awaitable). A send that does not complete at once, or fails, ends the stream.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import msgspec

from spine._core import WIRE_VERSION
from spine.fanout import Subscription
from spine.http.v1 import V1_VERSION
from spine.http.v1_stream import Journal

__all__ = ["SSE", "heartbeat", "pump"]

log = logging.getLogger("spine.http")
SSE = [("content-type", "text/event-stream"), ("cache-control", "no-cache"), ("x-accel-buffering", "no")]
_encode = msgspec.json.Encoder().encode


class _Stream:
    """The sink the hub pushes to: one write per call (a v1 stream first announces events
    its queue dropped with a resync)."""

    __slots__ = ("dropped", "ended", "journal", "last", "subscription", "transport")

    def __init__(self, transport: Any, subscription: Subscription, journal: Journal | None) -> None:
        self.transport, self.subscription, self.journal = transport, subscription, journal
        self.dropped = 0
        self.last = time.monotonic()
        self.ended: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def send(self, chunk: bytes) -> None:
        if self.ended.done():
            return
        if self.journal is not None and (dropped := self.subscription.stats()["dropped"]) > self.dropped:
            self.dropped = dropped
            chunk = self.journal.resync(None, "EVENTS_DROPPED") + chunk
        try:
            next(self.transport.send_bytes(chunk).__await__())
        except StopIteration:  # taken
            self.last = time.monotonic()
            return
        except Exception:  # noqa: BLE001 - the client went away mid-send
            log.debug("stream send failed; the stream is ended", exc_info=True)
            self.end()
            return
        log.error("the stream transport did not take a send at once; the stream is ended")
        self.end()

    def end(self) -> None:
        if not self.ended.done():
            self.ended.set_result(None)
        self.subscription.close()


async def pump(proto: Any, subscription: Subscription, first: bytes, journal: Journal | None,
               heartbeat_secs: float) -> None:
    """Serve one stream: ``first`` (a v1 backlog, or nothing), then whatever the hub pushes,
    until the client leaves."""
    stream = _Stream(proto.response_stream(200, SSE), subscription, journal)
    disconnected = asyncio.ensure_future(proto.client_disconnect())
    version = V1_VERSION if journal is not None else WIRE_VERSION
    try:
        if first:
            stream.send(first)
        subscription.push(stream.send)
        while not (disconnected.done() or stream.ended.done()):
            quiet = time.monotonic() - stream.last
            if quiet >= heartbeat_secs:
                stream.send(heartbeat(version))
                continue
            await asyncio.wait((disconnected, stream.ended), timeout=heartbeat_secs - quiet,
                               return_when=asyncio.FIRST_COMPLETED)
    finally:
        disconnected.cancel()
        stream.end()


def heartbeat(wire_version: str) -> bytes:
    """``event: heartbeat`` stamped now."""
    return b"event: heartbeat\ndata: " + _encode({"version": wire_version, "ts_event": str(time.time_ns())}) + b"\n\n"
