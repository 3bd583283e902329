"""What the gateway answers itself: its health and status (its own state and every
upstream's, reachable or not, with the error), the capability registry merged over the
nodes' and the screener's, and the screener's health when the screener cannot be reached
(``svc.screener_health``, process_state STOPPED, connection counters zero)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import msgspec

from spine._core import WIRE_VERSION
from spine.http.app import Relayed
from spine.http.errors import HttpError
from spine.http.registry import registry_entry
from spine.http.request import Query
from spine.http.routes import OPERATIONS, Operation, operation, relayed
from spine.gateway.upstreams import Upstream

if TYPE_CHECKING:
    from spine.gateway.service import Gateway

__all__ = ["GatewayHandlers"]

#: An upstream's availability beats another's in this order when several serve an operation.
_BEST = ("READY", "WARMING", "DISABLED", "UNAVAILABLE", "UNPUBLISHED", "UNSUPPORTED", "UNKNOWN")


class GatewayHandlers:
    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway

    def health_get(self, query: Query | None, params: dict[str, str]) -> dict[str, Any]:
        upstreams = self.gateway.upstreams
        down = [u for u in upstreams.all if u.reachable is False]
        reasons = sorted({"NODE_UNREACHABLE" if u.kind == "node" else "SCREENER_UNREACHABLE" for u in down}
                         | set(self.gateway.queue.degraded_reasons()))
        return {"version": WIRE_VERSION, "schema_id": "svc.health", "schema_version": 1, "live": True,
                "ready": any(node.reachable for node in upstreams.nodes), "degraded": bool(reasons),
                "degraded_reasons": reasons, "engine_status": None, "deployment_mode": self.gateway.config.mode,
                "ts_event": str(time.time_ns())}

    def status_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        gateway = self.gateway
        operator = gateway.config.mode == "private-operator"  # only an operator sees addresses
        return {"version": WIRE_VERSION, "schema_id": "svc.gateway_status", "schema_version": 1,
                "gateway_id": gateway.config.gateway_id, "deployment_mode": gateway.config.mode,
                "started_ts": str(gateway.started),
                "upstreams": [{**u.status(operator), "streams": gateway.feeds.status(u)}
                              for u in gateway.upstreams.all],
                "egress": gateway.feeds.egress_document(), "workers": gateway.queue.document(),
                "ts_event": str(time.time_ns())}

    def registry_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        mode = self.gateway.config.mode
        return {"version": WIRE_VERSION, "schema_id": "svc.capability_registry", "schema_version": 1,
                "node_id": self.gateway.config.gateway_id,
                "operations": [self._entry(op, mode) for op in OPERATIONS]}

    def _entry(self, op: Operation, mode: str) -> dict[str, Any]:
        entry = registry_entry(op, "gateway", deployment_mode=mode, warming=False)
        if not relayed(op, "gateway") or entry["availability"] == "DISABLED":
            return entry
        serving = self._upstreams_of(op)
        if not serving or any(not u.reachable for u in serving):
            entry["availability"] = "UNKNOWN"  # an upstream serving it is out of reach
            return entry
        entry["availability"] = min((u.registry.get(op.id, {}).get("availability", "UNSUPPORTED") for u in serving),
                                    key=_BEST.index)
        return entry

    def _upstreams_of(self, op: Operation) -> list[Upstream]:
        upstreams = self.gateway.upstreams
        out: list[Upstream] = []
        if "node" in op.served_by:
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
    return {"version": WIRE_VERSION, "schema_id": "svc.screener_health", "schema_version": 1,
            "process_state": "STOPPED", "input_lag_nanos": None, "processed": 0, "dropped": 0,
            "checkpoint_age_nanos": None,
            "connections": {"open": 0, "accepted": 0, "closed": 0, "refused": 0, "upstreams": []},
            "egress": None, "last_error": error, "ts_event": str(time.time_ns())}


_encode = msgspec.json.encode