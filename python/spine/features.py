"""Indicator features: the registry, per-(instrument, resolution) state, rows and deltas.

The kernels run in ``spine._core``; this module only frames their output as wire documents
(``svc.feature_row``, ``svc.feature_row_delta``). No loop here runs per bar.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from spine._core import WIRE_VERSION, FeatureState, FeatureUniverse, feature_specs
from spine.errors import TimestampError

__all__ = [
    "FeatureState",
    "FeatureUniverse",
    "FeatureValue",
    "Row",
    "compute_features",
    "feature_row",
    "feature_specs",
    "row_delta",
]

#: One wire-shaped value: ``{"kind": "DECIMAL", "value": "54.1234", "scale": 4}``,
#: ``{"kind": "INTEGER", "value": "-1"}``, ``{"kind": "UNIX_NANOS", "value": "<ns>"}`` or
#: ``{"kind": "ABSENT", "reason": "WARMING_UP", "bars_seen": 3, "bars_needed": 15}``.
FeatureValue = dict[str, str | int]
#: A row's values: ``<feature_id>.<output_name>`` -> value, in key order.
Row = dict[str, FeatureValue]


def compute_features(
    ts_event: Any,
    open: Any,
    high: Any,
    low: Any,
    close: Any,
    volume: Any,
    *,
    price_scale: int,
    size_scale: int,
    feature_ids: Sequence[str] | None = None,
) -> Row:
    """The row after warming fresh state from whole columns (uint64 ``ts_event``, int64
    mantissas at ``price_scale``/``size_scale``), offline, in one call."""
    ids = None if feature_ids is None else list(feature_ids)
    state = FeatureState(price_scale=price_scale, size_scale=size_scale, feature_ids=ids)
    state.warm(ts_event, open, high, low, close, volume)
    return state.row()


def feature_row(state: FeatureState, *, instrument_id: str, resolution: str) -> dict[str, Any]:
    """The ``svc.feature_row`` document of ``state``."""
    last = state.last_ts_event
    return {
        "version": WIRE_VERSION,
        "schema_id": "svc.feature_row",
        "schema_version": 1,
        "instrument_id": instrument_id,
        "resolution": resolution,
        "ts_event": None if last is None else str(last),
        "values": state.row(),
    }


def row_delta(
    previous: Mapping[str, FeatureValue],
    current: Mapping[str, FeatureValue],
    *,
    instrument_id: str,
    resolution: str,
    ts_event: int,
) -> dict[str, Any]:
    """The ``svc.feature_row_delta`` from ``previous`` to ``current`` values.

    A key whose value is new or changed (a change to ABSENT included) is an UPSERT; a key
    that left the row (its feature left the registry) is a RETIRE. Operations are in key
    order; unchanged keys are omitted.
    """
    if type(ts_event) is not int or not 0 <= ts_event < 2**64:
        raise TimestampError(f"INVALID_TIMESTAMP: ts_event {ts_event!r} is not a nanosecond instant; allowed: an int "
                             "0..2^64-1")
    operations: list[dict[str, Any]] = []
    for key in sorted(previous.keys() | current.keys()):
        if key not in current:
            operations.append({"op": "RETIRE", "key": key})
        elif previous.get(key) != current[key]:
            operations.append({"op": "UPSERT", "key": key, "value": dict(current[key])})
    return {
        "version": WIRE_VERSION,
        "schema_id": "svc.feature_row_delta",
        "schema_version": 1,
        "instrument_id": instrument_id,
        "resolution": resolution,
        "ts_event": str(ts_event),
        "operations": operations,
    }
