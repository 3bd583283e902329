"""The gateway process: its upstreams (looked at every ``refresh_secs``), the relay, its own
handlers, and its app on Granian, all in one event loop."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from spine.gateway.config import GatewayConfig
from spine.gateway.handlers import GatewayHandlers
from spine.gateway.relay import Relay
from spine.gateway.upstreams import Upstreams
from spine.http.app import App
from spine.http.routes import Operation, relayed
from spine.http.schema_routes import SchemaHandlers
from spine.http.serve import embedded_server

__all__ = ["Gateway", "GatewayApp"]

log = logging.getLogger("spine.gateway")


class Gateway:
    """See the module docs."""

    def __init__(self, config: GatewayConfig) -> None:
        self.config = config
        self.started = time.time_ns()
        self.upstreams = Upstreams(config.nodes, config.screener, config.upstream_timeout_secs)
        self.relay = Relay(self.upstreams)

    async def run(self, stop: asyncio.Event) -> None:
        """Serve until ``stop`` is set."""
        server = embedded_server(GatewayApp(self), host=self.config.host, port=self.config.port,
                                 backlog=self.config.http_backlog)
        http_task = asyncio.create_task(server.serve())
        watch = asyncio.create_task(self._watch(stop))
        try:
            await stop.wait()
        finally:
            watch.cancel()
            await asyncio.gather(watch, return_exceptions=True)
            await self.upstreams.aclose()
            server.stop()
            await asyncio.wait({http_task}, timeout=30)

    async def _watch(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            await self.upstreams.refresh()
            try:
                await asyncio.wait_for(stop.wait(), self.config.refresh_secs)
            except TimeoutError:
                pass


class GatewayApp(App):
    """The gateway's app: its own handlers and the schema set; every route a node or the
    screener serves, relayed (see :mod:`spine.gateway.relay`)."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.handlers = GatewayHandlers(gateway)
        super().__init__("gateway", (self.handlers, SchemaHandlers()), (), deployment_mode=gateway.config.mode,
                         body_secs=gateway.config.http_body_secs)

    def _handler(self, op: Operation) -> Callable[..., Any]:
        handler = self._handlers.get(op.id)
        if handler is None:
            if op.id == "spine.screener.health":
                handler = self.handlers.screener_health
            elif relayed(op, "gateway"):
                handler = self.gateway.relay.handler(op)
            else:
                handler = super()._handler(op)
            self._handlers[op.id] = handler
        return handler
