"""The gateway process: its upstreams (looked at every ``refresh_secs``), the relay, the
market streams' feeds (:mod:`spine.gateway.streams`), the watch over the job queue and its
workers (:mod:`spine.gateway.queue_watch`), its own handlers, and its app on Granian, all in one
event loop.

Streams: bars, quotes and trades are served from the gateway's hub, fed by one subscription
per node and stream; the screener's stream and the v1 ``/stream`` are relayed per subscriber
(:mod:`spine.gateway.pipe`). A v1 stream goes to the node of its ``instrument_id``'s venue,
or, without one, to the gateway's only node: its cursor is one node's journal position, so a
gateway over several nodes refuses it without an instrument (400 INVALID_PARAMETER)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from spine._core import WIRE_VERSION
from spine.gateway.backtests import BacktestHandlers, execution_config
from spine.gateway.catalogs import held_in
from spine.gateway.config import GatewayConfig
from spine.gateway.handlers import GatewayHandlers
from spine.gateway.queue_watch import QueueWatch
from spine.gateway.strategies import StrategyHandlers
from spine.jobs.store import Store
from spine.gateway.pipe import pipe
from spine.gateway.relay import Relay
from spine.gateway.runnable import RunChecks
from spine.gateway.streams import Feeds
from spine.gateway.upstreams import Upstreams
from spine.http.app import App
from spine.http.errors import HttpError
from spine.http.request import Query
from spine.http.routes import Operation, operation, relayed
from spine.http.schema_routes import SchemaHandlers
from spine.http.send_queue import SendQueue
from spine.http.serve import embedded_server
from spine.http.streams import market_kinds, pump
from spine.http.v1 import V1_VERSION

__all__ = ["Gateway", "GatewayApp"]

log = logging.getLogger("spine.gateway")


class Gateway:
    """See the module docs."""

    def __init__(self, config: GatewayConfig) -> None:
        self.config = config
        self.started = time.time_ns()
        self.upstreams = Upstreams(config.nodes, config.screener, config.upstream_timeout_secs)
        self.relay = Relay(self.upstreams)
        self.feeds = Feeds(self.upstreams.nodes, config.upstream_timeout_secs)
        Path(config.data_dir).mkdir(parents=True, exist_ok=True)
        self.store = Store(config.database_url)
        self.queue = QueueWatch(self.store, config.worker_stale_secs, config.worker_max_attempts,
                              config.queue_watch_secs)

    def known_instrument(self, iid: str) -> bool | None:
        """Whether a node lists ``iid`` or a configured catalog holds its bars (None when the
        node of its venue, or any node, cannot be asked now). Reads the disk: call it off the
        event loop."""
        if held_in(self.config.catalogs, iid):
            return True
        node = self.upstreams.node_of(iid.rsplit(".", 1)[-1])
        if node is not None:
            return iid in node.instruments
        return False if all(n.reachable for n in self.upstreams.nodes) else None

    async def run(self, stop: asyncio.Event) -> None:
        """Serve until ``stop`` is set."""
        server = embedded_server(GatewayApp(self), host=self.config.host, port=self.config.port,
                                 backlog=self.config.http_backlog)
        http_task = asyncio.create_task(server.serve())
        watches = [asyncio.create_task(self._watch(stop)), asyncio.create_task(self.queue.run(stop))]
        self.feeds.start()
        try:
            await stop.wait()
        finally:
            for watch in watches:
                watch.cancel()
            await asyncio.gather(*watches, return_exceptions=True)
            await self.feeds.aclose()
            await self.upstreams.aclose()
            server.stop()
            await asyncio.wait({http_task}, timeout=30)
            self.store.close()

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
        config = gateway.config
        engine_status = operation("spine.v1.engine_status.get")
        self.backtests = BacktestHandlers(
            gateway.store, config.gateway_id, execution_config(config.backtest_capital, config.backtest_seed),
            config.stream_heartbeat_secs,
            lambda query, params: gateway.relay.first_node(engine_status, query, params, None),
            instrument_check=lambda iid: gateway.known_instrument(iid) is not False,
            run_checks=RunChecks(gateway.upstreams, config.catalogs),
            job_stream_subscribers=config.job_stream_subscribers)
        strategies = StrategyHandlers(gateway.store, gateway.known_instrument)
        super().__init__("gateway", (self.handlers, strategies, self.backtests, SchemaHandlers()), (self.backtests,),
                         deployment_mode=config.mode, body_secs=config.http_body_secs)

    def _handler(self, op: Operation) -> Callable[..., Any]:
        handler = self._handlers.get(op.id)
        if handler is None:
            if relayed(op, "gateway"):
                # The gateway's own handler of a relayed operation comes first (the screener's
                # health: STOPPED when the screener cannot be reached).
                handler = getattr(self.handlers, op.handler, None) or self.gateway.relay.handler(op)
            else:
                handler = super()._handler(op)
            self._handlers[op.id] = handler
        return handler

    # --- streams --------------------------------------------------------------------------------

    async def _stream(self, op: Operation, query: Query, scope: Any, proto: Any) -> None:
        gateway = self.gateway
        heartbeat_secs = gateway.config.stream_heartbeat_secs
        if op.stream == "backtests":
            return await self.backtests.stream(query, proto)
        if op.stream == "screener":
            screener = gateway.upstreams.screener
            if screener is None:
                raise HttpError("UPSTREAM_UNAVAILABLE", f"GET {op.path}: this gateway has no screener configured")
            return await pipe(proto, gateway.feeds.client, screener.base_url, op.path, query.raw, {}, heartbeat_secs,
                              WIRE_VERSION, SendQueue(scope.server, scope.client), name=screener.name)
        iid = query.instrument_id()
        kinds = market_kinds(op.stream, query)
        if iid is not None:
            await gateway.relay.node_of(iid, held=True)
        feeds = gateway.feeds
        subscription = feeds.fanout.subscribe(instruments=None if iid is None else [iid], kinds=kinds)
        feeds.subscribers += 1
        try:
            await pump(proto, subscription, None, None, heartbeat_secs, SendQueue(scope.server, scope.client),
                       egress=feeds.egress)
        finally:
            feeds.subscribers -= 1

    async def _v1_stream(self, query: Query, scope: Any, proto: Any) -> None:
        """Relayed per subscriber to one node, ``cursor`` and ``Last-Event-ID`` passed on
        (see the module docs)."""
        gateway = self.gateway
        iid = query.instrument_id()
        nodes = gateway.upstreams.nodes
        if iid is not None:
            node = await gateway.relay.node_of(iid)
        elif len(nodes) == 1:
            node = nodes[0]
        else:
            raise HttpError("INVALID_PARAMETER", f"this gateway fronts {len(nodes)} nodes and a v1 stream cursor "
                                                 "is one node's: name an instrument_id (its venue's node is "
                                                 "streamed), or use /v2/stream/bars, /quotes and /trades")
        headers = {"last-event-id": text} if (text := scope.headers.get("last-event-id")) is not None else {}
        await pipe(proto, gateway.feeds.client, node.base_url, "/stream", query.raw, headers,
                   gateway.config.stream_heartbeat_secs, V1_VERSION, SendQueue(scope.server, scope.client),
                   name=node.name)
