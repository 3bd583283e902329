"""The gateway's HTTP side: what it answers itself and its app.

It answers its health and status (its own state and every upstream's, reachable or not, with
the error), the capability registry merged over the nodes' and the screener's, and the
screener's health when the screener cannot be reached (``svc.screener_health``,
process_state STOPPED, connection counters zero). Every route a node or the screener serves is
relayed (:mod:`spine.gateway.relay`).

Streams: bars, quotes and trades are served from the gateway's hub, fed by one subscription
per node and stream; the screener's stream and the v1 ``/stream`` are relayed per subscriber
(:mod:`spine.http.pipe`). A v1 stream goes to the node of its ``instrument_id``'s venue,
or, without one, to the gateway's only node: its cursor is one node's journal position, so a
gateway over several nodes refuses it without an instrument (400 INVALID_PARAMETER).

Handlers read the gateway through :class:`GatewayView`, which
:class:`spine.gateway.service.Gateway` satisfies; this module never imports the service, and
``spine.gateway.main`` puts the two together."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

import msgspec
import optuna

from spine._core import WIRE_VERSION
from spine.gateway.backtests import BacktestHandlers
from spine.gateway.config import GatewayConfig
from spine.gateway.queue_watch import QueueWatch
from spine.gateway.relay import Relay
from spine.gateway.runnable import RunChecks
from spine.gateway.strategies import StrategyHandlers
from spine.gateway.streams import Feeds
from spine.gateway.studies import StudyHandlers
from spine.gateway.upstream_table import Upstream, Upstreams
from spine.http.app import App, Relayed
from spine.http.errors import HttpError
from spine.http.pipe import pipe
from spine.http.registry import registry_entry
from spine.http.request import Query
from spine.http.routes import OPERATIONS, Operation, operation, relayed
from spine.http.schema_routes import SchemaHandlers
from spine.http.send_queue import SendQueue
from spine.http.streams import market_kinds, pump
from spine.http.v1 import V1_VERSION
from spine.jobs.request import ExecutionConfig
from spine.jobs.store import Store

__all__ = ["GatewayApp", "GatewayHandlers", "GatewayView"]


class GatewayView(Protocol):
    """What the gateway's handlers and app read of the running gateway: its configuration and
    start, its upstreams and their relay, the market feeds, the job store and its watch, the
    execution block of its backtests and the studies' trial storage and scheduler."""

    @property
    def config(self) -> GatewayConfig: ...
    @property
    def started(self) -> int: ...
    @property
    def upstreams(self) -> Upstreams: ...
    @property
    def relay(self) -> Relay: ...
    @property
    def feeds(self) -> Feeds: ...
    @property
    def store(self) -> Store: ...
    @property
    def queue(self) -> QueueWatch: ...
    @property
    def execution(self) -> ExecutionConfig: ...
    @property
    def study_storage(self) -> optuna.storages.BaseStorage: ...

    def wake_studies(self) -> None:
        """Tell the study scheduler a study was created or changed state."""
        ...

    def known_instrument(self, iid: str) -> bool | None:
        """Whether a node lists ``iid`` or a configured catalog holds it (None: cannot tell
        now). Reads the disk: call it off the event loop."""
        ...


#: An upstream's availability beats another's in this order when several serve an operation.
_BEST = ("READY", "WARMING", "DISABLED", "UNAVAILABLE", "UNPUBLISHED", "UNSUPPORTED", "UNKNOWN")


class GatewayHandlers:
    """The routes the gateway answers itself (see the module docs)."""

    def __init__(self, gateway: GatewayView) -> None:
        self.gateway = gateway

    def health_get(self, query: Query | None, params: dict[str, str]) -> dict[str, Any]:
        upstreams = self.gateway.upstreams
        down = [u for u in upstreams.all if u.reachable is False]
        reasons = sorted(
            {"NODE_UNREACHABLE" if u.kind == "node" else "SCREENER_UNREACHABLE" for u in down}
            | set(self.gateway.queue.degraded_reasons())
        )
        return {
            "version": WIRE_VERSION,
            "schema_id": "svc.health",
            "schema_version": 1,
            "live": True,
            "ready": any(node.reachable for node in upstreams.nodes),
            "degraded": bool(reasons),
            "degraded_reasons": reasons,
            "engine_status": None,
            "deployment_mode": self.gateway.config.mode,
            "ts_event": str(time.time_ns()),
        }

    def status_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        gateway = self.gateway
        operator = gateway.config.mode == "private-operator"  # only an operator sees addresses
        return {
            "version": WIRE_VERSION,
            "schema_id": "svc.gateway_status",
            "schema_version": 1,
            "gateway_id": gateway.config.gateway_id,
            "deployment_mode": gateway.config.mode,
            "started_ts": str(gateway.started),
            "upstreams": [{**u.status(operator), "streams": gateway.feeds.status(u)} for u in gateway.upstreams.all],
            "egress": gateway.feeds.egress_document(),
            "workers": gateway.queue.document(),
            "ts_event": str(time.time_ns()),
        }

    def registry_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        mode = self.gateway.config.mode
        return {
            "version": WIRE_VERSION,
            "schema_id": "svc.capability_registry",
            "schema_version": 1,
            "node_id": self.gateway.config.gateway_id,
            "operations": [self._entry(op, mode) for op in OPERATIONS],
        }

    def _entry(self, op: Operation, mode: str) -> dict[str, Any]:
        entry = registry_entry(op, "gateway", deployment_mode=mode, warming=False)
        if not relayed(op, "gateway") or entry["availability"] == "DISABLED":
            return entry
        serving = self._upstreams_of(op)
        if not serving or any(not u.reachable for u in serving):
            entry["availability"] = "UNKNOWN"  # an upstream serving it is out of reach
            return entry
        entry["availability"] = min(
            (u.registry.get(op.id, {}).get("availability", "UNSUPPORTED") for u in serving), key=_BEST.index
        )
        return entry

    def _upstreams_of(self, op: Operation) -> list[Upstream]:
        upstreams = self.gateway.upstreams
        out: list[Upstream] = []
        if "node" in op.served_by or "paper" in op.served_by:  # a paper node is a node
            out += upstreams.nodes
        if "screener" in op.served_by and upstreams.screener is not None:
            out.append(upstreams.screener)
        return out

    async def screener_health(self, query: Query, params: dict[str, str], body: Any = None) -> Any:
        """The screener's own document, or STOPPED with the error when it cannot be reached."""
        relay = self.gateway.relay
        try:
            return await relay.screener(_SCREENER_HEALTH, query, params, None)
        except HttpError as error:
            if error.symbol != "UPSTREAM_UNAVAILABLE":
                raise
            return Relayed(200, _encode(_stopped(error.text)))


_SCREENER_HEALTH = operation("spine.screener.health")


def _stopped(error: str) -> dict[str, Any]:
    return {
        "version": WIRE_VERSION,
        "schema_id": "svc.screener_health",
        "schema_version": 1,
        "process_state": "STOPPED",
        "input_lag_nanos": None,
        "processed": 0,
        "dropped": 0,
        "checkpoint_age_nanos": None,
        "connections": {"open": 0, "accepted": 0, "closed": 0, "refused": 0, "upstreams": []},
        "egress": None,
        "last_error": error,
        "ts_event": str(time.time_ns()),
    }


_encode = msgspec.json.encode


class GatewayApp(App):
    """The gateway's app: its own handlers and the schema set; every route a node or the
    screener serves, relayed (see :mod:`spine.gateway.relay`)."""

    def __init__(self, gateway: GatewayView) -> None:
        self.gateway = gateway
        self.handlers = GatewayHandlers(gateway)
        config = gateway.config
        engine_status = operation("spine.v1.engine_status.get")
        self.backtests = BacktestHandlers(
            gateway.store,
            config.gateway_id,
            gateway.execution,
            config.stream_heartbeat_secs,
            lambda query, params: gateway.relay.first_node(engine_status, query, params, None),
            instrument_check=lambda iid: gateway.known_instrument(iid) is not False,
            run_checks=RunChecks(gateway.upstreams, config.catalogs),
            job_stream_subscribers=config.job_stream_subscribers,
        )
        strategies = StrategyHandlers(gateway.store, gateway.known_instrument)
        studies = StudyHandlers(
            gateway.store,
            gateway.study_storage,
            config.gateway_id,
            gateway.execution,
            gateway.wake_studies,
            run_checks=RunChecks(gateway.upstreams, config.catalogs),
            instrument_check=lambda iid: gateway.known_instrument(iid) is not False,
        )
        super().__init__(
            "gateway",
            (self.handlers, strategies, self.backtests, studies, SchemaHandlers()),
            (self.backtests,),
            deployment_mode=config.mode,
            body_secs=config.http_body_secs,
        )

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

    async def _stream(self, op: Operation, query: Query, scope: Any, proto: Any) -> None:
        gateway = self.gateway
        heartbeat_secs = gateway.config.stream_heartbeat_secs
        if op.stream == "backtests":
            return await self.backtests.stream(query, proto)
        if op.stream == "screener":
            screener = gateway.upstreams.screener
            if screener is None:
                raise HttpError("UPSTREAM_UNAVAILABLE", f"GET {op.path}: this gateway has no screener configured")
            return await pipe(
                proto,
                gateway.feeds.client,
                screener.base_url,
                op.path,
                query.raw,
                {},
                heartbeat_secs,
                WIRE_VERSION,
                SendQueue(scope.server, scope.client),
                name=screener.name,
            )
        iid = query.instrument_id()
        kinds = market_kinds(op.stream, query)
        if iid is not None:
            await gateway.relay.node_of(iid, held=True)
        feeds = gateway.feeds
        subscription = feeds.fanout.subscribe(instruments=None if iid is None else [iid], kinds=kinds)
        feeds.subscribers += 1
        try:
            await pump(
                proto,
                subscription,
                None,
                None,
                heartbeat_secs,
                SendQueue(scope.server, scope.client),
                egress=feeds.egress,
            )
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
            raise HttpError(
                "INVALID_PARAMETER",
                f"this gateway fronts {len(nodes)} nodes and a v1 stream cursor "
                "is one node's: name an instrument_id (its venue's node is "
                "streamed), or use /v2/stream/bars, /quotes and /trades",
            )
        headers = {"last-event-id": text} if (text := scope.headers.get("last-event-id")) is not None else {}
        await pipe(
            proto,
            gateway.feeds.client,
            node.base_url,
            "/stream",
            query.raw,
            headers,
            gateway.config.stream_heartbeat_secs,
            V1_VERSION,
            SendQueue(scope.server, scope.client),
            name=node.name,
        )
