"""The node's v1 reads: twelve unprefixed GET routes read from the same running node, a
contract of their own (documents ``v1.*`` in ``schemas/v1/``, ``version: "spine.v1"``).

v1 is kept because some tools still read through it; it computes nothing v2 does not. The
records a venue node never produces (signals, chart markers, retirements, screener rows) are
served as empty pages: what the node truly has, never made-up records.
"""

from __future__ import annotations

import time
from importlib.metadata import version
from typing import Any

import msgspec

from spine.http.request import Query
from spine.http.schema_routes import schema_entries, schema_file
from spine.http.v1 import V1_VERSION, head, page, records
from spine.node.bar_pages import BarPages
from spine.node.reads import MarketHandlers
from spine.node.view import NodeView
from spine.wire.bar_types import bar_type_of

__all__ = ["V1Handlers"]


class V1Handlers:
    """Handlers over one venue node; ``market`` is the node's v2 handlers (shared reads)."""

    def __init__(self, node: NodeView, market: MarketHandlers, bar_pages: BarPages) -> None:
        self.node = node
        self.market = market
        self.bar_pages = bar_pages

    def v1_health_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        return {**head("health"), "live": True, "ts_event": str(time.time_ns())}

    def v1_readiness_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        engine = self.market.engine_status()
        return {
            **head("readiness"),
            "run_id": self.node.run_id,
            "lifecycle": None if engine is None else engine["lifecycle"],
            "authorities": [] if engine is None else engine["authorities"],
            "ts_event": str(time.time_ns()),
        }

    def v1_engine_status_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        return {**head("engine_status"), "engine_status": self.market.engine_status()}

    def v1_integration_capabilities_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        return {**head("integration_capabilities"), "items": [self.market.engine_pin_get(query, params)]}

    def v1_catalog_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        entries = [
            _catalog_entry(iid, channel, series)
            for iid, channel, series in sorted(self.node.held(), key=lambda held: (held[0], held[1]))
        ]
        items, cursor = page("/catalog", query, entries)
        return {**head("catalog"), "items": items, "next_cursor": cursor}

    def v1_bars_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        request = self.bar_pages.request(query, route="/bars")
        rows = self.bar_pages.rows(request)
        return {
            **head("bars"),
            "instrument_id": request.instrument_id,
            "bar_type": request.bar_type,
            "bars": msgspec.Raw(rows.rows),
            "withheld": [{"start": str(s), "end": str(e), "reason": r} for s, e, r in rows.withheld],
            "next_cursor": rows.next_cursor,
        }

    def v1_provenance_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        from spine.schemas import schema_set

        node = self.node
        return {
            **head("provenance"),
            "node_id": node.node_id,
            "integration": node.integration,
            "venue": node.venue,
            "run_id": node.run_id,
            "spine_version": version("spine-gateway"),
            "nautilus_trader_version": version("nautilus_trader"),
            "schema_digest": "sha256:" + schema_set().digest,
            "wire_versions": [V1_VERSION, "spine.v2"],
            "started_ts": str(self.market.started_ns),
        }

    def v1_schemas_get(self, query: Query, params: dict[str, str]) -> dict[str, Any] | bytes:
        """The spec's schema set by name with its digest; ``?name=<schema_id>[.json]`` serves one
        file's exact bytes (of either set, or a v1 document)."""
        from spine.schemas import schema_set

        name = query.text("name")
        if name is not None:
            return schema_file(name if name.endswith(".json") else f"{name}.json", v1=True)
        return {
            **head("schemas"),
            "digest": "sha256:" + schema_set().digest,  # v1 is not paged: the whole set
            "schemas": [
                {k: v for k, v in entry.items() if k != "set"} | {"path": f"/schemas?name={entry['file']}"}
                for entry in schema_entries()
            ],
        }

    def v1_signals_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        return records("signals", query)

    def v1_chart_markers_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        return records("chart_markers", query)

    def v1_retirements_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        return records("retirements", query)

    def v1_screener_rows_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        return records("screener_rows", query)


def _catalog_entry(instrument_id: str, channel: str, series: Any) -> dict[str, Any]:
    hint = series.resume_hint()
    oldest = msgspec.json.decode(series.page(limit=1)[0])
    return {
        "instrument_id": instrument_id,
        "channel": channel,
        "bar_type": bar_type_of(instrument_id, "1m", channel),
        "bars": len(series),
        "first_ts_event": oldest[0]["ts_event"] if oldest else None,
        "last_ts_event": None if hint["newest_ts_event"] is None else str(hint["newest_ts_event"]),
        "last_sequence": series.last_sequence,
    }
