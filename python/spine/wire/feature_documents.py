"""msgspec Structs for the feature documents: the registry spec, the row and the row delta.

A value is a closed union tagged by ``kind``; integers travel as strings like decimals and
timestamps. The schemas stay the authority for cross-field rules (an INTEGER output has
scale 0; ``bars_seen``/``bars_needed`` appear exactly with WARMING_UP).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

import msgspec

from spine.wire.primitives import Count, Decimal, Document, InstrumentId, Nanos, Resolution, WireObject

__all__ = [
    "FEATURE_DOCUMENT_TYPES",
    "AbsentValue",
    "DecimalValue",
    "FeatureOutput",
    "FeatureRow",
    "FeatureRowDelta",
    "FeatureSpec",
    "FeatureValue",
    "IntegerValue",
    "RetireOperation",
    "UnixNanosValue",
    "UpsertOperation",
    "Warmup",
]

Scale = Annotated[int, msgspec.Meta(ge=0, le=18)]
FeatureId = Annotated[str, msgspec.Meta(pattern=r"^[a-z][a-z0-9_]{0,63}\Z")]
RowKey = Annotated[str, msgspec.Meta(pattern=r"^[a-z][a-z0-9_]{0,63}\.[a-z][a-z0-9_]{0,63}\Z")]
IntegerString = Annotated[str, msgspec.Meta(pattern=r"^(?!-0\Z)-?(0|[1-9][0-9]*)\Z", max_length=20)]
ParameterName = Annotated[str, msgspec.Meta(pattern=r"^[a-z][a-z0-9_]{0,63}\Z")]


class _Value(WireObject, kw_only=True, tag_field="kind"):
    """Base of the value variants."""


class DecimalValue(_Value, kw_only=True, tag="DECIMAL"):
    value: Decimal
    scale: Scale


class IntegerValue(_Value, kw_only=True, tag="INTEGER"):
    value: IntegerString


class UnixNanosValue(_Value, kw_only=True, tag="UNIX_NANOS"):
    value: Nanos


class AbsentValue(_Value, kw_only=True, tag="ABSENT"):
    reason: Literal["WARMING_UP", "INPUT_UNAVAILABLE", "GAP_IN_INPUT"]
    bars_seen: Count | msgspec.UnsetType = msgspec.UNSET
    bars_needed: Count | msgspec.UnsetType = msgspec.UNSET


FeatureValue = DecimalValue | IntegerValue | UnixNanosValue | AbsentValue


class FeatureOutput(WireObject, kw_only=True):
    name: FeatureId
    value_type: Literal["DECIMAL", "INTEGER", "UNIX_NANOS"]
    scale: Scale
    refresh: Literal["BAR_CLOSE"]


class Warmup(WireObject, kw_only=True):
    warmupBars: Count  # noqa: N815 - the spec's field name


class FeatureSpec(Document, kw_only=True):
    schema_id: Literal["svc.feature_spec"] = "svc.feature_spec"
    config_hash: Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{64}\Z")]
    feature_id: FeatureId
    feature_version: Annotated[str, msgspec.Meta(pattern=r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\Z")]
    implementation: Annotated[str, msgspec.Meta(pattern=r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+\Z")]
    input_kind: Literal["BAR"]
    parameters: dict[ParameterName, Decimal]
    warmup: Warmup
    outputs: Annotated[list[FeatureOutput], msgspec.Meta(min_length=1)]


class FeatureRow(Document, kw_only=True):
    schema_id: Literal["svc.feature_row"] = "svc.feature_row"
    instrument_id: InstrumentId
    resolution: Resolution
    ts_event: Nanos | None
    values: dict[RowKey, FeatureValue]


class _Operation(WireObject, kw_only=True, tag_field="op"):
    """Base of the delta operations: UPSERT and RETIRE only."""


class UpsertOperation(_Operation, kw_only=True, tag="UPSERT"):
    key: RowKey
    value: FeatureValue


class RetireOperation(_Operation, kw_only=True, tag="RETIRE"):
    key: RowKey


class FeatureRowDelta(Document, kw_only=True):
    schema_id: Literal["svc.feature_row_delta"] = "svc.feature_row_delta"
    instrument_id: InstrumentId
    resolution: Resolution
    ts_event: Nanos
    operations: list[UpsertOperation | RetireOperation]


FEATURE_DOCUMENT_TYPES: Mapping[str, Any] = {
    "svc.feature_spec": FeatureSpec,
    "svc.feature_row": FeatureRow,
    "svc.feature_row_delta": FeatureRowDelta,
}
