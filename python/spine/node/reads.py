"""The node's v2 read handlers: each takes the checked query and path parameters and returns
the document the route serves, read from the running node (nothing is computed here that the
node or the core did not produce; derived bars are folded on read by ``spine._core``)."""

from __future__ import annotations

import decimal
import time
from collections.abc import Callable
from typing import Any, TypeVar

import msgspec

from spine.errors import DiscoveryNotRegistered
from spine.http.errors import HttpError
from spine.http.registry import registry_document
from spine.http.request import Query, path_instrument_id
from spine.node.bar_pages import BarPages
from spine.node.ledger import LEDGER_CHANNELS
from spine.node.view import CoverageView, NodeView
from spine.wire.cursors import InvalidCursor, LimitOutOfRange
from spine.wire.head import head

__all__ = ["MarketHandlers"]

T = TypeVar("T")

FACT_KINDS = ("mark_price", "index_price", "funding_rate", "liquidation")
DATA_KINDS = ("funding_rate", "index_price", "instrument_status", "mark_price", "option_greeks")
#: How stale a served health document may be (100 ms).
HEALTH_REFRESH_NS = 100_000_000
_encode = msgspec.json.Encoder().encode
STEP_NS = {"1m": 60, "5m": 300, "15m": 900, "30m": 1800, "1h": 3600, "4h": 14400, "1d": 86400}


class MarketHandlers:
    """Handlers over one :class:`~spine.node.view.NodeView`."""

    def __init__(self, node: NodeView) -> None:
        self.node = node
        self.started_ns = time.time_ns()
        self.bar_pages = BarPages(node)
        self._health: tuple[int, bytes] = (-HEALTH_REFRESH_NS, b"")

    # health, status, registry

    def engine_status(self) -> dict[str, Any] | None:
        return None if self.node.lifecycle() == "STARTING" else self.node.engine_status(time.time_ns())

    def health_bytes(self) -> bytes:
        """The encoded health document, rebuilt at most every ``HEALTH_REFRESH_NS``: health is
        polled hard (balancers, probes) and must cost about what a constant answer costs. The
        document's own ts_event says when it was produced."""
        now = time.monotonic_ns()
        if now - self._health[0] >= HEALTH_REFRESH_NS:
            self._health = (now, _encode(self.health_get(None, {})))
        return self._health[1]

    def health_get(self, query: Query | None, params: dict[str, str]) -> dict[str, Any]:
        engine = self.engine_status()
        reasons = []
        if self.node.writes_refused():
            reasons.append("CATALOG_WRITES_REFUSED")
        if self.node.hydration_counts()["failed"]:
            reasons.append("HYDRATION_FAILED")
        # Gaps unresolved now, not the engine status' counter of buckets ever withheld (a
        # counter never clears, and a gap the venue confirmed empty or repair filled is gone).
        if self.node.gaps_unresolved():
            reasons.append("UNRESOLVED_GAPS")
        ready = engine is not None and engine["lifecycle"] in ("RUNNING", "CHECKPOINTED")
        return {
            **head("svc.health"),
            "live": True,
            "ready": ready,
            "degraded": bool(reasons),
            "degraded_reasons": reasons,
            "engine_status": engine,
            "ts_event": str(time.time_ns()),
        }

    def status_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        node, now = self.node, time.time_ns()
        counts = node.counts()
        elapsed = max(now - self.started_ns, 1)
        seen = node.connection(now)  # observed, as /v2/connection serves it
        return {
            **head("svc.node_status"),
            "node_id": node.node_id,
            "state": _NODE_STATE[node.lifecycle()],
            "started_ts": str(self.started_ns),
            "ts_event": str(now),
            "connectivity": [
                {
                    "venue": node.venue,
                    "connected": seen.state == "CONNECTED",
                    "since": None if seen.since is None else str(seen.since),
                    "last_error": seen.last_error,
                }
            ],
            "counters": {
                "instruments": counts.instruments,
                "quotes": counts.quotes,
                "trades": counts.trades,
                "bars": counts.bars,
            },
            "rates": {
                "quotes_per_second": _rate(counts.quotes, 10**9, elapsed),
                "trades_per_second": _rate(counts.trades, 10**9, elapsed),
                "bars_per_minute": _rate(counts.bars, 60 * 10**9, elapsed),
            },
            "hydration": node.hydration_counts(),
        }

    def connection_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        now = time.time_ns()
        seen = self.node.connection(now)
        return {
            **head("svc.connection_state"),
            "node_id": self.node.node_id,
            "integration": self.node.integration,
            "venue": self.node.venue,
            "state": seen.state,
            "since": None if seen.since is None else str(seen.since),
            "data_clients": [{"client_id": c, "connected": up} for c, up in seen.clients],
            "last_error": seen.last_error,
            "ts_event": str(now),
        }

    def engine_pin_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        integration = self.node.integration
        if integration == "catalog":  # imported bars: spot instruments, EXTERNAL 1-minute bars only
            classes, channels = ["SPOT"], ["bars_external"]
        else:
            # The simulated venue serves every channel the coverage ledger tracks.
            classes, channels = ["SPOT", "SWAP", "OPTION"], list(LEDGER_CHANNELS)
        return {
            **head("svc.integration_capability"),
            "integration": integration,
            "venue": self.node.venue,
            "instrument_classes": classes,
            "channels": channels,
            "history": integration in ("sim", "catalog"),
            "instrument_search": True,
            "execution": self.node.execution is not None,
        }

    def registry_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        return registry_document(
            self.node.node_id,
            "node" if self.node.execution is None else "paper",
            deployment_mode=self.node.deployment_mode,
            warming=self.node.lifecycle() == "STARTING",
        )

    # market data

    def instruments_list(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        items, cursor = _page("/v2/instruments", query, self.node.instrument_docs())
        return {**head("svc.instrument_page"), "items": items, "next_cursor": cursor}

    def resolutions_list(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        roster = [("1s", 1, False, False), ("1m", 60, True, False)]
        roster += [(name, STEP_NS[name], False, True) for name in ("5m", "15m", "30m", "1h", "4h", "1d")]
        page, cursor = _page("/v2/resolutions", query, roster)  # a list route: paged like every other
        return {
            **head("svc.resolutions"),
            "calendar_aligned": True,
            "resolutions": [
                {"name": n, "step_nanos": str(s * 10**9), "durable": d, "derived": v} for n, s, d, v in page
            ],
            "next_cursor": cursor,
        }

    def facts_list(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        kind = query.text("kind")
        if kind is None:
            raise HttpError("INVALID_PARAMETER", f"kind is required; allowed: {', '.join(FACT_KINDS)}")
        return self._facts(kind, FACT_KINDS, f"/v2/facts?kind={kind}", query)  # a cursor is bound to its kind

    def data_list(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        return self._facts(params["kind"], DATA_KINDS, f"/v2/data/{params['kind']}", query)

    def _facts(self, kind: str, served: tuple[str, ...], route: str, query: Query) -> dict[str, Any]:
        if kind not in served:  # never served by this route: 404 now, not a 503 "retry shortly"
            raise HttpError(
                "UNKNOWN_KIND", f"kind {kind!r} is not served by this route; its kinds: {', '.join(served)}"
            )
        offered = [k for k in served if self._serves(k)]
        if kind not in offered:
            raise HttpError(
                "UNKNOWN_KIND", f"kind {kind!r} is not served by this node; served here: {', '.join(offered) or 'none'}"
            )
        slots = self.node.facts(kind)
        items, cursor = _page(route, query, [slots[i] for i in sorted(slots)])
        return {**head("svc.facts_page"), "kind": kind, "items": items, "next_cursor": cursor}

    def _serves(self, kind: str) -> bool:
        """A kind is served when some discovered instrument's product family carries it."""
        if not self.node.discovery_registered():
            raise HttpError("NOT_READY", "the node has not discovered its instruments yet; retry shortly")
        return kind in self.node.fact_kinds()

    def hydration_list(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        cursor, limit = query.text("cursor"), query.limit(100)
        return _cursor_errors(lambda: self.node.hydration_page(cursor, limit))

    def hydration_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        iid = path_instrument_id(params["id"])
        entry = self.node.hydration_entry(iid)
        if entry is None:
            raise HttpError("NOT_FOUND", f"{iid} has no hydration state on this node")
        return dict(entry)

    def coverage_list(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        return self._coverage(query, "all")

    def coverage_failures(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        return self._coverage(query, "failures")

    def coverage_quiet(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        return self._coverage(query, "quiet")

    def _coverage(self, query: Query, view: CoverageView) -> dict[str, Any]:
        cursor, limit = query.text("cursor"), query.limit(100)
        return _cursor_errors(lambda: self._ledger(lambda: self.node.coverage_page(cursor, limit, view)))

    def coverage_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        iid = path_instrument_id(params["id"])

        def entry() -> dict[str, Any]:
            try:
                return dict(self.node.coverage_entry(iid))
            except KeyError:
                raise HttpError("NOT_FOUND", f"{iid} is not in this node's coverage ledger") from None

        return self._ledger(entry)

    def _ledger(self, read: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        try:
            return read()
        except DiscoveryNotRegistered:
            raise HttpError(
                "DISCOVERY_NOT_REGISTERED", "coverage is served once the node has registered discovery; retry shortly"
            ) from None

    # bars

    def bars_list(self, query: Query, params: dict[str, str]) -> bytes:
        return self.bar_pages.get(query)


#: The node's running state from its engine's lifecycle: a run that ended, completed or failed,
#: is STOPPED (a failure's error is the connectivity's last_error).
_NODE_STATE = {
    "STARTING": "STARTING",
    "RUNNING": "RUNNING",
    "CHECKPOINTED": "RUNNING",
    "COMPLETED": "STOPPED",
    "FAILED": "STOPPED",
}

_RATE = decimal.Context(prec=60, rounding=decimal.ROUND_HALF_EVEN)


def _rate(count: int, per_ns: int, elapsed_ns: int) -> str:
    """``count`` per ``per_ns`` nanoseconds over ``elapsed_ns``, exact then rounded half-even at
    scale 3 (every rate at the same scale, computed without floats)."""
    exact = _RATE.divide(decimal.Decimal(count * per_ns), decimal.Decimal(elapsed_ns))
    return str(exact.quantize(decimal.Decimal("0.001"), context=_RATE))


def _page(route: str, query: Query, items: list[Any]) -> tuple[list[Any], str | None]:
    return query.page(route, items)


def _cursor_errors(read: Callable[[], T]) -> T:
    try:
        return read()
    except InvalidCursor as error:
        raise HttpError("INVALID_CURSOR", str(error).split(": ", 1)[-1]) from None
    except LimitOutOfRange as error:
        raise HttpError("LIMIT_OUT_OF_RANGE", str(error).split(": ", 1)[-1]) from None
