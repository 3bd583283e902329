"""msgspec Structs for the wire documents: the error envelope and the market-data documents.

Each document mirrors its schema in ``schemas/`` field for field; the schema stays the
authority (cross-field rules such as ``history_terminal`` live only there). Node documents
(health, status, coverage, hydration, registry, engine status) are in ``node_documents``, the
integration-specific ones (selection, search, connection) in ``integration_documents``;
:data:`DOCUMENT_TYPES` maps every schema id to its Struct type.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated, Any, Literal

import msgspec

from spine.wire import feature_documents as features
from spine.wire import node_documents as node
from spine.wire.primitives import (
    Channel,
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
    "DOCUMENT_TYPES",
    "Bar",
    "BarEnvelope",
    "ErrorDetail",
    "ErrorEnvelope",
    "FactsPage",
    "FundingRateFrame",
    "FundingRatePayload",
    "Gap",
    "IndexPriceFrame",
    "InstrumentPage",
    "SchemaEntry",
    "SchemaIndex",
    "InstrumentRef",
    "InstrumentStatusFrame",
    "InstrumentStatusPayload",
    "Interval",
    "LiquidationFrame",
    "LiquidationPayload",
    "MarkPriceFrame",
    "OptionGreeksFrame",
    "OptionGreeksPayload",
    "PricePayload",
    "ProjectionFrame",
    "QuoteTick",
    "SeriesCoverage",
    "TradeTick",
    "WithheldBucket",
]

# --- error envelope: no schema tags on the wire (pinned decision 5) -----------------------


class ErrorDetail(WireObject, kw_only=True):
    code: Annotated[int, msgspec.Meta(ge=40000, le=59999)]
    detail: Annotated[str, msgspec.Meta(pattern=r"^[A-Z][A-Z0-9_]*: ")]


class ErrorEnvelope(WireObject, kw_only=True):
    version: Literal["spine.v2"] = "spine.v2"
    error: ErrorDetail


# --- instruments, bars, coverage, ticks ---------------------------------------------------


class InstrumentRef(Document, kw_only=True):
    schema_id: Literal["svc.instrument_ref"] = "svc.instrument_ref"
    instrument_id: InstrumentId
    symbol: Annotated[str, msgspec.Meta(min_length=1)]
    venue: Symbol
    instrument_class: InstrumentClass
    base_currency: str | None
    quote_currency: Annotated[str, msgspec.Meta(min_length=1)]
    settlement_currency: Annotated[str, msgspec.Meta(min_length=1)]
    is_inverse: bool
    price_precision: Annotated[int, msgspec.Meta(ge=0, le=18)]
    size_precision: Annotated[int, msgspec.Meta(ge=0, le=18)]
    price_increment: Decimal
    size_increment: Decimal
    multiplier: Decimal
    lot_size: Decimal | None
    min_quantity: Decimal | None
    max_quantity: Decimal | None
    min_notional: Decimal | None
    underlying: str | None
    option_kind: Literal["CALL", "PUT"] | None
    strike_price: Decimal | None
    activation_ts: Nanos | None
    expiration_ts: Nanos | None
    ts_event: Nanos
    ts_init: Nanos


class Interval(WireObject, kw_only=True):
    start: Nanos
    end: Nanos


class Gap(WireObject, kw_only=True):
    start: Nanos
    end: Nanos
    resolved: bool


class SeriesCoverage(Document, kw_only=True):
    schema_id: Literal["svc.series_coverage"] = "svc.series_coverage"
    instrument_id: InstrumentId
    channel: Channel
    retention_state: Literal["retained", "unretained", "unmanaged"]
    exhausted: bool
    history_terminal: bool
    sparse_ok: bool
    bar_count: Count
    observed: list[Interval]
    gaps: list[Gap]
    #: Optional on the wire (additive): minutes the venue confirmed empty.
    confirmed_empty: list[Interval] = []
    newest_close: Nanos | None
    resume_from: Nanos | None


class Bar(WireObject, kw_only=True):
    sequence: Count
    ts_event: Nanos
    open: Decimal
    high: Decimal
    low: Decimal
    close: Decimal
    volume: Decimal


class WithheldBucket(WireObject, kw_only=True):
    start: Nanos
    end: Nanos
    reason: Literal["GAP_IN_INPUT", "UNOBSERVED", "NOT_CLOSED"]


class BarEnvelope(Document, kw_only=True):
    schema_id: Literal["svc.bar_envelope"] = "svc.bar_envelope"
    instrument_id: InstrumentId
    bar_type: str
    resolution: Resolution
    channel: Channel
    bars: list[Bar]
    coverage: SeriesCoverage
    withheld: list[WithheldBucket]
    next_cursor: Cursor


class QuoteTick(Document, kw_only=True):
    schema_id: Literal["svc.quote_tick"] = "svc.quote_tick"
    instrument_id: InstrumentId
    bid_price: Decimal
    ask_price: Decimal
    bid_size: Decimal
    ask_size: Decimal
    ts_event: Nanos
    ts_init: Nanos


class TradeTick(Document, kw_only=True):
    schema_id: Literal["svc.trade_tick"] = "svc.trade_tick"
    instrument_id: InstrumentId
    price: Decimal
    size: Decimal
    aggressor_side: Literal["BUYER", "SELLER", "NO_AGGRESSOR"]
    trade_id: Annotated[str, msgspec.Meta(min_length=1, max_length=36)]
    ts_event: Nanos
    ts_init: Nanos


# --- projection frames: one Struct per kind, tagged by `kind` so a union decodes ----------


class PricePayload(WireObject, kw_only=True):
    value: Decimal


class FundingRatePayload(WireObject, kw_only=True):
    rate: Decimal
    next_funding_ts: Nanos | None


class OptionGreeksPayload(WireObject, kw_only=True):
    delta: Decimal
    gamma: Decimal
    vega: Decimal
    theta: Decimal
    rho: Decimal
    iv: Decimal
    underlying_price: Decimal


class InstrumentStatusPayload(WireObject, kw_only=True):
    action: Annotated[str, msgspec.Meta(pattern=r"^[A-Z][A-Z_]*\Z")]
    reason: str | None
    is_trading: bool | None


class LiquidationPayload(WireObject, kw_only=True):
    side: Literal["BUY", "SELL"]
    price: Decimal
    quantity: Decimal


class _Frame(Document, kw_only=True, tag_field="kind"):
    schema_id: Literal["svc.projection_frame"] = "svc.projection_frame"
    instrument_id: InstrumentId
    ts_event: Nanos
    ts_init: Nanos


class MarkPriceFrame(_Frame, kw_only=True, tag="mark_price"):
    payload: PricePayload


class IndexPriceFrame(_Frame, kw_only=True, tag="index_price"):
    payload: PricePayload


class FundingRateFrame(_Frame, kw_only=True, tag="funding_rate"):
    payload: FundingRatePayload


class OptionGreeksFrame(_Frame, kw_only=True, tag="option_greeks"):
    payload: OptionGreeksPayload


class InstrumentStatusFrame(_Frame, kw_only=True, tag="instrument_status"):
    payload: InstrumentStatusPayload


class LiquidationFrame(_Frame, kw_only=True, tag="liquidation"):
    payload: LiquidationPayload


ProjectionFrame = (
    MarkPriceFrame
    | IndexPriceFrame
    | FundingRateFrame
    | OptionGreeksFrame
    | InstrumentStatusFrame
    | LiquidationFrame
)
Kind = Literal[
    "mark_price", "index_price", "funding_rate", "option_greeks", "instrument_status", "liquidation"
]


class FactsPage(Document, kw_only=True):
    schema_id: Literal["svc.facts_page"] = "svc.facts_page"
    kind: Kind
    items: list[ProjectionFrame]
    next_cursor: Cursor


class SchemaEntry(WireObject, kw_only=True):
    schema_id: Annotated[str, msgspec.Meta(pattern=r"^svc\.[a-z][a-z0-9_]*$")]
    schema_version: Annotated[int, msgspec.Meta(ge=1, le=2**63 - 1)]
    file: Annotated[str, msgspec.Meta(pattern=r"^svc\.[a-z][a-z0-9_]*\.json$")]
    path: Annotated[str, msgspec.Meta(pattern=r"^/")]


class SchemaIndex(Document, kw_only=True):
    schema_id: Literal["svc.schema_index"] = "svc.schema_index"
    digest: Annotated[str, msgspec.Meta(pattern=r"^sha256:[0-9a-f]{64}$")]
    schemas: list[SchemaEntry]
    next_cursor: Cursor


class InstrumentPage(Document, kw_only=True):
    schema_id: Literal["svc.instrument_page"] = "svc.instrument_page"
    items: list[InstrumentRef]
    next_cursor: Cursor


# Imported here, not at the top: the integration documents embed InstrumentRef (above).
from spine.wire import integration_documents as integration  # noqa: E402

DOCUMENT_TYPES: Mapping[str, Any] = MappingProxyType(
    {
        "svc.error_envelope": ErrorEnvelope,
        "svc.instrument_ref": InstrumentRef,
        "svc.instrument_page": InstrumentPage,
        "svc.schema_index": SchemaIndex,
        "svc.series_coverage": SeriesCoverage,
        "svc.bar_envelope": BarEnvelope,
        "svc.quote_tick": QuoteTick,
        "svc.trade_tick": TradeTick,
        "svc.projection_frame": ProjectionFrame,
        "svc.facts_page": FactsPage,
        **node.NODE_DOCUMENT_TYPES,
        **features.FEATURE_DOCUMENT_TYPES,
        **integration.INTEGRATION_DOCUMENT_TYPES,
    }
)
"""Every schema id and the type ``msgspec.json.decode`` takes for it (a union for frames)."""
