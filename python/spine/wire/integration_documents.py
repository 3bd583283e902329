"""msgspec Structs for the integration-specific node documents: the selection (roster) rows
and page, the instrument search query and result, and the venue connection state.

Their shapes are ours to decide (the spec only names them; see docs/contract.md); the Structs
mirror the schemas field for field, and the schemas stay the authority for cross-field rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

import msgspec

from spine.wire.documents import InstrumentRef
from spine.wire.node_documents import LedgerChannel
from spine.wire.primitives import Count, Cursor, Document, InstrumentClass, InstrumentId, Nanos, Symbol, WireObject

__all__ = [
    "INTEGRATION_DOCUMENT_TYPES",
    "ConnectionState",
    "DataClient",
    "SearchQuery",
    "SearchResult",
    "SelectionPage",
    "SelectionRow",
]

NonEmpty = Annotated[str, msgspec.Meta(min_length=1)]


class SelectionRow(Document, kw_only=True):
    schema_id: Literal["svc.selection_row"] = "svc.selection_row"
    instrument_id: InstrumentId
    selected: bool
    retention_state: Literal["retained", "unretained", "unmanaged"]
    manifest: bool | None
    channels: list[LedgerChannel]
    second_tier: bool


class SelectionPage(Document, kw_only=True):
    schema_id: Literal["svc.selection_page"] = "svc.selection_page"
    items: list[SelectionRow]
    next_cursor: Cursor


class SearchQuery(Document, kw_only=True):
    schema_id: Literal["svc.search_query"] = "svc.search_query"
    text: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
    instrument_classes: Annotated[list[InstrumentClass], msgspec.Meta(min_length=1)] | None
    limit: Annotated[int, msgspec.Meta(ge=1, le=1000)]


class SearchResult(Document, kw_only=True):
    schema_id: Literal["svc.search_result"] = "svc.search_result"
    search_id: Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{64}\Z")]
    query: SearchQuery
    items: list[InstrumentRef]
    total: Count
    next_cursor: Cursor
    ts_event: Nanos


class DataClient(WireObject, kw_only=True):
    client_id: NonEmpty
    connected: bool


class ConnectionState(Document, kw_only=True):
    schema_id: Literal["svc.connection_state"] = "svc.connection_state"
    node_id: NonEmpty
    integration: Annotated[str, msgspec.Meta(pattern=r"^[a-z][a-z0-9_]*\Z")]
    venue: Symbol
    state: Literal["CONNECTED", "CONNECTING", "DISCONNECTED", "STOPPED"]
    since: Nanos | None
    data_clients: list[DataClient]
    last_error: str | None
    ts_event: Nanos


INTEGRATION_DOCUMENT_TYPES: Mapping[str, Any] = {
    "svc.selection_row": SelectionRow,
    "svc.selection_page": SelectionPage,
    "svc.search_query": SearchQuery,
    "svc.search_result": SearchResult,
    "svc.connection_state": ConnectionState,
}
