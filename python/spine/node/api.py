"""The venue node's app: its v2 and v1 handlers over a :class:`~spine.node.view.NodeView`, the
health probe's cached document, and its SSE streams fed by the fan-out hub (bars, quotes and
trades, and the v1 ``/stream`` through the run's journal).

A stream subscribes with its keep-predicate (instrument, kind) applied at enqueue; the hub
pushes it whatever it has pending, written in one send (:mod:`spine.http.streams`), and it
sends a ``heartbeat`` event after ``heartbeat_secs`` without a write.
"""

from __future__ import annotations

import time
from typing import Any

from spine.http.app import App
from spine.http.errors import HttpError
from spine.http.request import NANOS, U64, Query
from spine.http.routes import Operation, Process
from spine.http.schema_routes import SchemaHandlers
from spine.http.send_queue import SendQueue
from spine.http.streams import market_kinds, pump
from spine.node.execution_reads import ExecutionHandlers
from spine.node.reads import MarketHandlers
from spine.node.search import SearchHandlers
from spine.node.selection import SelectionHandlers
from spine.node.v1_reads import V1Handlers
from spine.node.v1_stream import Journal
from spine.node.view import NodeView

__all__ = ["NodeApp", "build_app"]


class NodeApp(App):
    """A venue node's app over one :class:`~spine.node.view.NodeView`."""

    def __init__(self, node: NodeView, *, heartbeat_secs: float = 15.0, body_secs: float = 10.0) -> None:
        self.node = node
        self.handlers = MarketHandlers(node)
        v1 = V1Handlers(node, self.handlers, self.handlers.bar_pages)
        v2: tuple[Any, ...] = (self.handlers, SelectionHandlers(node), SearchHandlers(node), SchemaHandlers())
        paper = node.execution is not None  # a paper node: the execution reads are its own
        if paper:
            v2 += (ExecutionHandlers(node),)
        process: Process = "paper" if paper else "node"
        super().__init__(process, v2, (v1,), deployment_mode=node.deployment_mode, body_secs=body_secs)
        self.journal = Journal(node.run_id, base=time.time_ns())  # cursors above the run's start
        node.hub.taps.append(self.journal.record)
        self.heartbeat_secs = heartbeat_secs

    def health_bytes(self) -> bytes:
        return self.handlers.health_bytes()

    async def _stream(self, op: Operation, query: Query, scope: Any, proto: Any) -> None:
        iid = query.instrument_id()
        kinds = market_kinds(op.stream, query)
        if iid is not None and not self.node.holds(iid):
            raise HttpError("NOT_FOUND", f"{iid} is not ingested on this node")
        subscription = self.node.hub.subscribe(instruments=None if iid is None else [iid], kinds=kinds)
        await pump(proto, subscription, None, None, self.heartbeat_secs, SendQueue(scope.server, scope.client))

    async def _v1_stream(self, query: Query, scope: Any, proto: Any) -> None:
        """The v1 stream: kept events above the cursor (``?cursor=`` or ``Last-Event-ID``),
        then live ones; ``event: resync`` whenever that promise cannot be kept."""
        text = query.text("cursor")
        if text is None:
            text = scope.headers.get("last-event-id")
        if text is not None and (not NANOS.match(text) or int(text) > U64):
            shown = text if len(text) <= 40 else text[:40] + "..."
            raise HttpError(
                "INVALID_CURSOR",
                f"cursor={shown!r}; a v1 stream cursor is an event sequence "
                "number from this run (ASCII digits, no leading zero, at most "
                "2^64-1)",
            )
        iid = query.instrument_id()
        if iid is not None and not self.node.holds(iid):
            raise HttpError("NOT_FOUND", f"{iid} is not ingested on this node")
        subscription, backlog = self.journal.open(None if text is None else int(text), iid)
        await pump(
            proto, subscription, backlog, self.journal, self.heartbeat_secs, SendQueue(scope.server, scope.client)
        )


def build_app(node: NodeView, **options: Any) -> NodeApp:
    """The app over ``node`` (tests drive it in-process; ``spine node`` serves it)."""
    return NodeApp(node, **options)
