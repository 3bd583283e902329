"""Spine's SSE server for the fan-out benchmark: the node's own ``NodeApp`` over a real
``FanOut`` hub, on embedded Granian, with the publisher in the same event loop (as the actor
publishes in the node's loop). Two bench-only routes sit in front of the app:

- ``/bench/subscribers``: how many subscriptions the hub holds;
- ``/bench/publish?rate=R&seconds=S``: publish for S seconds (R per second, 0: flat out) and
  answer ``{"published": n, "seconds": s}`` when done.

    python -m benches.http.sse_spine PORT [BACKLOG]
"""

from __future__ import annotations

import sys
import time
from types import SimpleNamespace
from typing import Any
from urllib.parse import parse_qs

from benches.http import embedded
from benches.http.events import INSTRUMENT, control_answer, publish
from spine.fanout import FanOut
from spine.node.api import NodeApp
from spine.node.heap import settle_heap
from spine.wire.bar_types import bar_kind

JSON = [("content-type", "application/json")]


class BenchApp:
    """``NodeApp`` over a stand-in node view holding just what its streams read: the hub, the
    book's membership and the run id (the app's v1 journal taps the hub, as on a real node)."""

    def __init__(self) -> None:
        self.node: Any = SimpleNamespace(
            hub=FanOut(),
            holds={INSTRUMENT}.__contains__,
            run_id="bench-sse-run",
            lifecycle=lambda: "RUNNING",
            deployment_mode="public-readonly",
            execution=None,  # a market-data node
        )
        self.app = NodeApp(self.node, heartbeat_secs=3600.0)  # no heartbeats inside a run
        settle_heap()  # as ``spine node`` does once it has started

    async def __rsgi__(self, scope: Any, proto: Any) -> None:
        if scope.proto == "http" and scope.path == "/bench/subscribers":
            proto.response_bytes(200, JSON, b'{"subscribers":%d}' % len(self.node.hub))
        elif scope.proto == "http" and scope.path == "/bench/publish":
            query = {k: float(v[0]) for k, v in parse_qs(scope.query_string).items()}
            started = time.monotonic()
            published = await publish(
                self._offer, query.get("rate", 0.0), query.get("seconds", 1.0), int(query.get("burst", 1))
            )
            proto.response_bytes(200, JSON, control_answer(published, started))
        else:
            await self.app.__rsgi__(scope, proto)

    def _offer(self, payload: bytes) -> None:
        self.node.hub.publish(bar_kind("1m", "EXTERNAL"), INSTRUMENT, payload)  # as the actor publishes a closed bar


if __name__ == "__main__":
    embedded.serve(BenchApp(), "rsgi", int(sys.argv[1]), *map(int, sys.argv[2:3]))
