"""msgspec Structs for the node documents: engine status, health, status, resolutions,
coverage ledger, hydration, capability registry and integration capability.

Shapes the spec leaves "not shown" are designed in the schemas (see docs/contract.md); these
Structs mirror them field for field, and the schema stays the authority for cross-field rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

import msgspec

from spine.wire.primitives import (
    Count,
    Cursor,
    Decimal,
    Document,
    InstrumentClass,
    InstrumentId,
    Nanos,
    Resolution,
    Symbol,
    WireObject,
)

__all__ = [
    "NODE_DOCUMENT_TYPES",
    "ScreenerConnections",
    "ScreenerEgress",
    "ScreenerHealth",
    "StreamHeartbeat",
    "AuthorityCounters",
    "CapabilityRegistry",
    "ChannelState",
    "ChannelTotals",
    "CoverageLedger",
    "EngineCounters",
    "EngineStatus",
    "Health",
    "HydrationCounts",
    "HydrationEntry",
    "HydrationState",
    "IntegrationCapability",
    "LedgerChannel",
    "LedgerEntry",
    "NodeCounters",
    "NodeRates",
    "NodeStatus",
    "Operation",
    "ResolutionEntry",
    "Resolutions",
    "ShardTotals",
    "VenueConnection",
]

NonEmpty = Annotated[str, msgspec.Meta(min_length=1)]
Lifecycle = Literal["STARTING", "RUNNING", "CHECKPOINTED", "COMPLETED", "FAILED"]
LedgerChannel = Literal[
    "quotes", "trades", "bars_external", "bars_internal", "bars_second",
    "mark_price", "index_price", "funding_rate", "option_greeks", "instrument_status", "liquidation",
]
WireHydration = Literal["EMPTY", "HYDRATING", "READY", "FAILED"]
InternalHydration = Literal["EMPTY", "HYDRATING", "READY", "NO_HISTORY", "RETRY_WAIT", "FAILED"]

# --- engine status and health -------------------------------------------------------------


class EngineCounters(WireObject, kw_only=True):
    bars_accepted: Count
    bars_rejected: Count
    signals_emitted: Count
    orders_submitted: Count
    fills: Count
    errors: Count


class AuthorityCounters(WireObject, kw_only=True):
    authority: NonEmpty
    gaps: Count
    duplicates: Count
    out_of_order: Count


class EngineStatus(Document, kw_only=True):
    schema_id: Literal["svc.engine_status"] = "svc.engine_status"
    run_id: str | None
    lifecycle: Lifecycle
    ts_event: Nanos
    counters: EngineCounters
    authorities: list[AuthorityCounters]
    last_error: str | None


class Health(Document, kw_only=True):
    schema_id: Literal["svc.health"] = "svc.health"
    live: Literal[True] = True
    ready: bool
    degraded: bool
    degraded_reasons: list[Symbol]
    engine_status: EngineStatus | None
    ts_event: Nanos


# --- node status and resolutions ----------------------------------------------------------


class VenueConnection(WireObject, kw_only=True):
    venue: Symbol
    connected: bool
    since: Nanos | None
    last_error: str | None


class NodeCounters(WireObject, kw_only=True):
    instruments: Count
    quotes: Count
    trades: Count
    bars: Count


class NodeRates(WireObject, kw_only=True):
    quotes_per_second: Decimal
    trades_per_second: Decimal
    bars_per_minute: Decimal


class HydrationCounts(WireObject, kw_only=True):
    empty: Count
    hydrating: Count
    ready: Count
    failed: Count


class NodeStatus(Document, kw_only=True):
    schema_id: Literal["svc.node_status"] = "svc.node_status"
    node_id: NonEmpty
    state: Literal["STARTING", "RUNNING", "STOPPING", "STOPPED"]
    started_ts: Nanos | None
    ts_event: Nanos
    connectivity: list[VenueConnection]
    counters: NodeCounters
    rates: NodeRates
    hydration: HydrationCounts


class ResolutionEntry(WireObject, kw_only=True):
    name: Resolution
    step_nanos: Nanos
    durable: bool
    derived: bool


class Resolutions(Document, kw_only=True):
    schema_id: Literal["svc.resolutions"] = "svc.resolutions"
    calendar_aligned: Literal[True] = True
    resolutions: list[ResolutionEntry]
    next_cursor: Cursor


# --- coverage ledger and hydration --------------------------------------------------------


class ChannelTotals(WireObject, kw_only=True):
    eligible: Count
    upstream_unsupported: Count
    planned: Count
    subscribed: Count
    failed: Count
    unretained: Count
    with_flow: Count
    quiet: Count


class ShardTotals(WireObject, kw_only=True):
    shard: NonEmpty
    discovered: Count
    active: Count
    inactive: Count
    channels: ChannelTotals
    out_of_order: Count


class ChannelState(WireObject, kw_only=True):
    channel: LedgerChannel
    eligibility: Literal["eligible", "upstream_unsupported"]
    subscription: Literal["planned", "subscribed", "failed", "unretained"] | None
    flow: Literal["with_flow", "quiet"] | None
    last_event_ts: Nanos | None
    last_error: str | None


class LedgerEntry(WireObject, kw_only=True):
    instrument_id: InstrumentId
    shard: NonEmpty
    status: Annotated[str, msgspec.Meta(pattern=r"^(ACTIVE|INACTIVE:.+)\Z")]
    channels: list[ChannelState]
    out_of_order: Count


class CoverageLedger(Document, kw_only=True):
    schema_id: Literal["svc.coverage_ledger"] = "svc.coverage_ledger"
    view: Literal["all", "failures", "quiet", "instrument"]
    shards: list[ShardTotals]
    items: list[LedgerEntry]
    next_cursor: Cursor


class HydrationEntry(WireObject, kw_only=True):
    instrument_id: InstrumentId
    state: WireHydration
    internal_state: InternalHydration
    attempts: Count
    next_retry_ts: Nanos | None
    last_error: str | None
    updated_ts: Nanos


class HydrationState(Document, kw_only=True):
    schema_id: Literal["svc.hydration_state"] = "svc.hydration_state"
    items: list[HydrationEntry]
    next_cursor: Cursor


# --- capability registry and integration capability ---------------------------------------


class Operation(WireObject, kw_only=True):
    id: Annotated[str, msgspec.Meta(pattern=r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+\Z")]
    wire_version: Literal["v1", "v2"]
    effect: Literal["QUERY", "COMMAND", "STREAM"]
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"]
    path: Annotated[str, msgspec.Meta(pattern=r"^/")]
    tool: NonEmpty | None
    schema_ids: list[Annotated[str, msgspec.Meta(pattern=r"^svc\.[a-z][a-z0-9_]*\Z")]]
    providers: list[NonEmpty]
    requires_paper: bool
    requires_confirmation: bool
    availability: Literal[
        "READY", "UNSUPPORTED", "WARMING", "DISABLED", "UNAVAILABLE", "UNKNOWN", "UNPUBLISHED"
    ]


class CapabilityRegistry(Document, kw_only=True):
    schema_id: Literal["svc.capability_registry"] = "svc.capability_registry"
    node_id: NonEmpty
    operations: list[Operation]


class IntegrationCapability(Document, kw_only=True):
    schema_id: Literal["svc.integration_capability"] = "svc.integration_capability"
    integration: Annotated[str, msgspec.Meta(pattern=r"^[a-z][a-z0-9_]*\Z")]
    venue: Symbol
    instrument_classes: list[InstrumentClass]
    channels: list[LedgerChannel]
    history: bool
    instrument_search: bool
    execution: bool


# --- screener health ------------------------------------------------------------------------


class ScreenerConnections(WireObject, kw_only=True):
    open: Count
    accepted: Count
    closed: Count
    refused: Count


class ScreenerEgress(WireObject, kw_only=True):
    events_sent: Count
    bytes_sent: Count
    events_dropped: Count


class ScreenerHealth(Document, kw_only=True):
    """The screener's health; the gateway builds it with process_state STOPPED and a real
    last_error when the screener cannot be reached (the schema requires the error then)."""

    schema_id: Literal["svc.screener_health"] = "svc.screener_health"
    process_state: Literal["STARTING", "RUNNING", "DEGRADED", "STOPPING", "STOPPED"]
    input_lag_nanos: Nanos | None
    processed: Count
    dropped: Count
    checkpoint_age_nanos: Nanos | None
    connections: ScreenerConnections
    egress: ScreenerEgress | None
    last_error: str | None
    ts_event: Nanos


class StreamHeartbeat(Document, kw_only=True):
    schema_id: Literal["svc.stream_heartbeat"] = "svc.stream_heartbeat"
    ts_event: Nanos


NODE_DOCUMENT_TYPES: Mapping[str, Any] = {
    "svc.engine_status": EngineStatus,
    "svc.health": Health,
    "svc.node_status": NodeStatus,
    "svc.resolutions": Resolutions,
    "svc.coverage_ledger": CoverageLedger,
    "svc.hydration_state": HydrationState,
    "svc.capability_registry": CapabilityRegistry,
    "svc.integration_capability": IntegrationCapability,
    "svc.screener_health": ScreenerHealth,
    "svc.stream_heartbeat": StreamHeartbeat,
}
