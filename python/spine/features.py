"""Indicator features: the registry, per-(instrument, resolution) state, rows, deltas and
pattern observations.

The kernels run in ``spine._core``; this module only frames their output as wire documents
(``svc.feature_row``, ``svc.feature_row_delta``). No loop here runs per bar.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from spine._core import WIRE_VERSION, DeltaWriter, FeatureState, FeatureUniverse, ObservationWriter, feature_specs
from spine.errors import FeatureError, TimestampError

__all__ = [
    "DeltaWriter",
    "FeatureState",
    "FeatureUniverse",
    "FeatureValue",
    "ObservationWriter",
    "Row",
    "compute_features",
    "feature_row",
    "feature_row_document",
    "feature_specs",
    "row_delta",
]

#: One wire-shaped value: ``{"kind": "DECIMAL", "value": "54.1234", "scale": 4}``,
#: ``{"kind": "INTEGER", "value": "-1"}``, ``{"kind": "UNIX_NANOS", "value": "<ns>"}`` or
#: ``{"kind": "ABSENT", "reason": "WARMING_UP", "bars_seen": 3, "bars_needed": 15}``.
FeatureValue = dict[str, str | int]
#: A row's values: ``<feature_id>.<output_name>`` -> value, in key order.
Row = dict[str, FeatureValue]

# The schemas' patterns (svc.feature_row / svc.feature_row_delta), with \Z for ECMA-262's `$`.
_INSTRUMENT_ID = re.compile(r"[!-~]+\.[A-Z][A-Z0-9_]*\Z")
_RESOLUTION = re.compile(r"[1-9][0-9]*(s|m|h|d)\Z")
_ROW_KEY = re.compile(r"[a-z][a-z0-9_]{0,63}\.[a-z][a-z0-9_]{0,63}\Z")


def _refuse(text: str) -> FeatureError:
    return FeatureError(f"INVALID_FEATURE_INPUT: {text}", "INVALID_FEATURE_INPUT")


def _check_names(instrument_id: object, resolution: object) -> None:
    """A document is produced valid or not at all: the row's names are checked as its schema
    checks them, and refused naming the argument."""
    if not (isinstance(instrument_id, str) and len(instrument_id) <= 128 and _INSTRUMENT_ID.match(instrument_id)):
        raise _refuse(
            f"instrument_id {instrument_id!r} is not a canonical id; allowed: SYMBOL.VENUE (printable "
            "ASCII symbol, venue [A-Z][A-Z0-9_]*), at most 128 characters"
        )
    if not (isinstance(resolution, str) and _RESOLUTION.match(resolution)):
        raise _refuse(
            f"resolution {resolution!r} is not a resolution name; allowed: a count and a unit, "
            "e.g. 1m, 5m, 15m, 30m, 1h, 4h, 1d"
        )


def _check_keys(name: str, values: object) -> Mapping[Any, Any]:
    if not isinstance(values, Mapping):
        raise _refuse(
            f"{name} is a {type(values).__name__}; allowed: a mapping of row keys to values (a FeatureState.row())"
        )
    for key in values:
        if not (isinstance(key, str) and _ROW_KEY.match(key)):
            raise _refuse(f"{name}: {key!r} is not a row key; allowed: <feature_id>.<output_name>")
    return values


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
    if isinstance(feature_ids, (str, bytes)):
        raise _refuse(
            f"feature_ids is the single {type(feature_ids).__name__} {feature_ids!r}, which would be read "
            "character by character; allowed: a list of feature ids, e.g. ['rsi_14'], or None for all"
        )
    ids = None if feature_ids is None else list(feature_ids)
    state = FeatureState(price_scale=price_scale, size_scale=size_scale, feature_ids=ids)
    state.warm(ts_event, open, high, low, close, volume)
    return state.row()


def feature_row(state: FeatureState, *, instrument_id: str, resolution: str) -> dict[str, Any]:
    """The ``svc.feature_row`` document of ``state``.

    # Errors
    :class:`~spine.errors.FeatureError` (``INVALID_FEATURE_INPUT``) for an ``instrument_id``
    or ``resolution`` the schema refuses; ``TypeError`` when ``state`` is no FeatureState.
    """
    if not isinstance(state, FeatureState):
        raise TypeError(f"state must be a FeatureState, got {type(state).__name__}")
    _check_names(instrument_id, resolution)
    return feature_row_document(instrument_id, resolution, state.last_ts_event, state.row())


def feature_row_document(instrument_id: str, resolution: str, last_ts_event: int | None, values: Row) -> dict[str, Any]:
    """The ``svc.feature_row`` document of a row's values, newest bar at ``last_ts_event``."""
    return {
        "version": WIRE_VERSION,
        "schema_id": "svc.feature_row",
        "schema_version": 1,
        "instrument_id": instrument_id,
        "resolution": resolution,
        "ts_event": None if last_ts_event is None else str(last_ts_event),
        "values": values,
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

    # Errors
    :class:`~spine.errors.FeatureError` (``INVALID_FEATURE_INPUT``) for an ``instrument_id``
    or ``resolution`` the schema refuses, keys that are no row keys, or a current value that is
    not one of the typed variants; :class:`~spine.errors.TimestampError` for ``ts_event``.
    """
    _check_names(instrument_id, resolution)
    previous = _check_keys("previous", previous)
    current = _check_keys("current", current)
    if type(ts_event) is not int or not 0 <= ts_event < 2**64:
        raise TimestampError(
            f"INVALID_TIMESTAMP: ts_event {ts_event!r} is not a nanosecond instant; allowed: an int 0..2^64-1"
        )
    operations: list[dict[str, Any]] = []
    for key in sorted(previous.keys() | current.keys()):
        if key not in current:
            operations.append({"op": "RETIRE", "key": key})
        elif key not in previous or previous[key] != current[key]:
            value = current[key]
            operations.append(
                {"op": "UPSERT", "key": key, "value": dict(value) if isinstance(value, Mapping) else value}
            )
    _check_values(operations)
    return {
        "version": WIRE_VERSION,
        "schema_id": "svc.feature_row_delta",
        "schema_version": 1,
        "instrument_id": instrument_id,
        "resolution": resolution,
        "ts_event": str(ts_event),
        "operations": operations,
    }


_DECIMAL = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?\Z")
_INTEGER = re.compile(r"-?(0|[1-9][0-9]*)\Z")
_NANOS = re.compile(r"(0|[1-9][0-9]*)\Z")
#: The whole-number kinds: their pattern, bounds (low inclusive, high exclusive) and refusal.
_WHOLE = {
    "INTEGER": (_INTEGER, -(2**63), 2**63, "an INTEGER has exactly kind and value, a signed 64-bit integer string"),
    "UNIX_NANOS": (_NANOS, 0, 2**64, "a UNIX_NANOS has exactly kind and value, a nanosecond string"),
}
_REASONS = ("WARMING_UP", "INPUT_UNAVAILABLE", "GAP_IN_INPUT")


def _count(value: object) -> bool:
    return type(value) is int and 0 <= value < 2**63


def _value_defect(value: object) -> str | None:
    """Why ``value`` is not one of the typed variants of svc.feature_row (None when it is).
    By hand rather than through jsonschema: a delta is built per changed row, and the schema's
    validator is far slower (figures in docs/performance.md); tests check the two agree."""
    if not isinstance(value, Mapping):
        return f"{value!r} is not a value object"
    kind, fields = value.get("kind"), set(value)
    text = value.get("value")
    if kind == "DECIMAL":
        scale = value.get("scale")
        if fields != {"kind", "value", "scale"} or type(scale) is not int or not 0 <= scale <= 18:
            return "a DECIMAL has exactly kind, value and scale (an int 0..18)"
        if not (isinstance(text, str) and _DECIMAL.match(text)) or text.startswith("-0") and not text.strip("-0."):
            return f"DECIMAL value {text!r} is not a decimal string"
        if len(text.partition(".")[2]) != scale:
            return f"DECIMAL value {text!r} does not have exactly scale {scale} fractional digits"
        return None
    if kind in _WHOLE:
        pattern, low, high, what = _WHOLE[kind]
        if (
            fields != {"kind", "value"}
            or not (isinstance(text, str) and len(text) <= 20 and pattern.match(text))
            or text == "-0"
            or not low <= int(text) < high
        ):
            return f"{what}, got {text!r}"
        return None
    if kind == "ABSENT":
        reason = value.get("reason")
        if reason not in _REASONS:
            return f"ABSENT reason {reason!r} is not one of {', '.join(_REASONS)}"
        if reason == "WARMING_UP":
            if fields != {"kind", "reason", "bars_seen", "bars_needed"} or not (
                _count(value.get("bars_seen")) and _count(value.get("bars_needed"))
            ):
                return "ABSENT WARMING_UP carries exactly bars_seen and bars_needed (counts)"
        elif fields != {"kind", "reason"}:
            return f"ABSENT {reason} carries exactly kind and reason"
        return None
    return f"kind {kind!r} is not one of DECIMAL, INTEGER, UNIX_NANOS, ABSENT"


def _check_values(operations: list[dict[str, Any]]) -> None:
    """Refuse upserted values that are not the typed variants (never a zero, a null or a float
    standing in for ABSENT), naming the key."""
    for operation in operations:
        if operation["op"] == "UPSERT":
            defect = _value_defect(operation["value"])
            if defect is not None:
                raise _refuse(
                    f"current[{operation['key']!r}]: {defect}; allowed values: DECIMAL, INTEGER, "
                    "UNIX_NANOS or ABSENT with a reason, as FeatureState.row() gives them"
                )
