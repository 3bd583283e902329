"""Plain-Python oracle for ``svc.feature_row_delta``: the delta between two consecutive row
snapshots (``FeatureUniverse.row`` dicts), and a delta applied to a row. Never imports spine."""

from __future__ import annotations

from typing import Any

Row = dict[str, dict[str, Any]]


def delta(previous: Row, current: Row, *, instrument_id: str, resolution: str, ts_event: int) -> dict[str, Any] | None:
    """The document from ``previous`` to ``current``, or None when no key changed: a key new
    or changed in ``current`` (ABSENT included) is an UPSERT, a key only in ``previous`` a
    RETIRE; in key order."""
    operations: list[dict[str, Any]] = []
    for key in sorted(set(previous) | set(current)):
        if key not in current:
            operations.append({"op": "RETIRE", "key": key})
        elif previous.get(key) != current[key]:
            operations.append({"op": "UPSERT", "key": key, "value": current[key]})
    if not operations:
        return None
    return {
        "version": "spine.v2",
        "schema_id": "svc.feature_row_delta",
        "schema_version": 1,
        "instrument_id": instrument_id,
        "resolution": resolution,
        "ts_event": str(ts_event),
        "operations": operations,
    }


def apply(row: Row, document: dict[str, Any]) -> Row:
    """``row`` with ``document``'s operations applied."""
    out = dict(row)
    for operation in document["operations"]:
        if operation["op"] == "UPSERT":
            out[operation["key"]] = operation["value"]
        else:
            del out[operation["key"]]
    return out
