"""The gateway's market streams (``/v2/stream/bars``, ``/quotes``, ``/trades``): per node ONE
upstream subscription to each, without filters, opened when the gateway starts and feeding the
gateway's own fan-out hub, which its subscribers read as a node's read the node's hub (same
filters applied at enqueue, heartbeats, 2,048-event drop-oldest queues). A thousand
subscribers through the gateway cost each node three streams, not a thousand.

Opened at start rather than on the first subscriber: events flow the moment a client
connects, and the status shows each feed's state whether or not anyone listens (a gateway
with no subscribers still reads its nodes' streams; the hub drops what no queue keeps).

Each event is relayed as bytes: the upstream's frame (``event: ...\\ndata: ...\\n\\n``) is
published as received; only its hub key (the instrument, and a bar's resolution and channel)
is read, by a msgspec decode into a Struct of those fields. The node's heartbeats are dropped
(the gateway's streams send their own). A lost feed (the node stopped, a read idle for
``IDLE_SECS``, a refusal) is reopened with jittered exponential backoff, from
``RECONNECT_MIN_SECS`` to ``RECONNECT_MAX_SECS``, for the gateway's lifetime; events the node
published meanwhile are not recovered (a v2 stream has no resume)."""

from __future__ import annotations

import asyncio
import logging
import random
from typing import Any

import httpx
import msgspec

from spine.fanout import FanOut
from spine.gateway.upstream_table import Upstream, plain_cause
from spine.http.streams import Egress
from spine.wire.bar_types import BAR_CHANNELS, BAR_RESOLUTIONS, bar_kind

__all__ = ["FEEDS", "Feed", "Feeds"]

log = logging.getLogger("spine.gateway")

#: The node streams every node is followed on: path -> the hub kind of a tick event (None: bars).
FEEDS: dict[str, str | None] = {"/v2/stream/bars": None, "/v2/stream/quotes": "quote", "/v2/stream/trades": "trade"}
#: A feed that has read nothing (not even the node's heartbeat) for this long is reopened.
IDLE_SECS = 60.0
RECONNECT_MIN_SECS = 0.2
RECONNECT_MAX_SECS = 5.0
_KINDS = {(r, c): bar_kind(r, c) for r in BAR_RESOLUTIONS for c in BAR_CHANNELS}
_HEARTBEAT = b"event: heartbeat\n"
_DATA = b"\ndata: "


class _BarKey(msgspec.Struct):
    instrument_id: str
    resolution: str
    channel: str


class _TickKey(msgspec.Struct):
    instrument_id: str


_bar_key = msgspec.json.Decoder(_BarKey).decode
_tick_key = msgspec.json.Decoder(_TickKey).decode


class Feed:
    """One node's stream at ``path``, published into ``fanout``, and its state."""

    def __init__(self, node: Upstream, path: str, fanout: FanOut, client: httpx.AsyncClient) -> None:
        self.node, self.path, self.fanout, self.client = node, path, fanout, client
        self.tick_kind = FEEDS[path]
        self.connected = False
        #: Times the node accepted the stream; events relayed; frames the gateway could not key.
        self.connects = self.events = self.unreadable = 0
        self.last_error: str | None = None

    def status(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "connected": self.connected,
            "connects": self.connects,
            "events": self.events,
            "last_error": self.last_error,
        }

    async def run(self) -> None:
        """Follow the stream for ever, reopening it when lost (cancel to stop)."""
        delay = RECONNECT_MIN_SECS
        while True:
            connects = self.connects
            try:
                await self._follow()
                error = "the node ended the stream"
                cause = error
            except httpx.HTTPError as failure:
                error, cause = f"{type(failure).__name__}: {failure}", plain_cause(failure)
            except Exception as failure:  # noqa: BLE001 - logged; the feed must outlive any one fault
                log.exception("%s%s: the feed failed", self.node.base_url, self.path)
                error, cause = f"{type(failure).__name__}: {failure}", plain_cause(failure)
            if self.connected or self.last_error is None:
                log.warning("%s%s: %s; reopening", self.node.base_url, self.path, error)
            # Public (GET /v2/status): the node's name and a plain cause, never its address.
            self.connected, self.last_error = False, f"{self.node.name}: GET {self.path}: {cause}"
            if self.connects > connects:
                delay = RECONNECT_MIN_SECS  # it was open: start the backoff afresh
            await asyncio.sleep(delay * random.uniform(0.5, 1.0))
            delay = min(2 * delay, RECONNECT_MAX_SECS)

    async def _follow(self) -> None:
        async with self.client.stream(
            "GET", self.node.base_url + self.path, headers={"accept": "text/event-stream"}
        ) as response:
            if response.status_code != 200:
                raise httpx.HTTPStatusError(f"HTTP {response.status_code}", request=response.request, response=response)
            self.connected = True
            self.connects += 1
            rest = b""
            async for chunk in response.aiter_raw():
                rest = self.publish(rest + chunk if rest else chunk)

    def publish(self, data: bytes) -> bytes:
        """Publish every whole frame of ``data``; what follows the last one (kept for the next
        chunk). The node writes whole frames, so a chunk is usually exactly a run of them."""
        start, find = 0, data.find
        while (end := find(b"\n\n", start)) != -1:
            self.relay(data[start : end + 2])
            start = end + 2
        return data[start:]

    def relay(self, frame: bytes) -> None:
        """One upstream frame into the hub under the key the node published it under."""
        if frame.startswith(_HEARTBEAT):
            return
        at = frame.find(_DATA)
        try:
            if self.tick_kind is None:
                bar = _bar_key(memoryview(frame)[at + 7 : -2])
                kind = _KINDS.get((bar.resolution, bar.channel)) or bar_kind(bar.resolution, bar.channel)
                iid = bar.instrument_id
            else:
                kind, iid = self.tick_kind, _tick_key(memoryview(frame)[at + 7 : -2]).instrument_id
        except msgspec.DecodeError:
            self.unreadable += 1
            if self.unreadable == 1:
                log.error(
                    "%s%s: a frame the gateway cannot key was skipped: %r", self.node.base_url, self.path, frame[:200]
                )
            return
        self.events += 1
        self.fanout.publish(kind, iid, frame)


class Feeds:
    """Every node's feeds into one hub, the client they share and the egress of the gateway's
    market streams."""

    def __init__(self, nodes: list[Upstream], connect_secs: float) -> None:
        self.fanout = FanOut()
        self.egress = Egress()
        #: Market-stream subscribers connected now.
        self.subscribers = 0
        self.client = httpx.AsyncClient(
            timeout=httpx.Timeout(IDLE_SECS, connect=connect_secs, pool=connect_secs),
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=0),
        )
        self.feeds = {node.base_url: [Feed(node, path, self.fanout, self.client) for path in FEEDS] for node in nodes}
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        self._tasks = [asyncio.create_task(feed.run()) for feeds in self.feeds.values() for feed in feeds]

    def status(self, upstream: Upstream) -> list[dict[str, Any]]:
        return [feed.status() for feed in self.feeds.get(upstream.base_url, [])]

    def egress_document(self) -> dict[str, int]:
        return {"subscribers": self.subscribers, **self.egress.document()}

    async def aclose(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.client.aclose()
