"""Spine: market-data, screener and strategy gateway. The library API, re-exported.

A table of contents: the logic lives in ``spine._core`` (Rust) and the submodules.
"""

from __future__ import annotations

from spine._core import (
    MAX_DECIMAL_SCALE,
    MAX_JSON_DEPTH,
    WIRE_VERSION,
    FoldResult,
    ScreenTable,
    Series,
    StrategyKernel,
    canonical_json,
    canonicalize,
    format_decimal,
    identity,
    parse_decimal,
    parse_timestamp,
    quantize_decimal,
)
from spine._version import __version__
from spine.bars import fold_bars, load_batch, series_batch
from spine.errors import (
    BarsError,
    CanonicalJsonError,
    DecimalError,
    FeatureError,
    HubError,
    IdentityNameError,
    ScreenError,
    SpineError,
    StrategyRuleError,
    TimestampError,
)
from spine.features import (
    DeltaWriter,
    FeatureState,
    FeatureUniverse,
    ObservationWriter,
    compute_features,
    feature_row,
    feature_specs,
    row_delta,
)

__all__ = [
    "__version__",
    "MAX_DECIMAL_SCALE",
    "MAX_JSON_DEPTH",
    "WIRE_VERSION",
    "BarsError",
    "CanonicalJsonError",
    "FoldResult",
    "Series",
    "DecimalError",
    "DeltaWriter",
    "FeatureError",
    "FeatureState",
    "FeatureUniverse",
    "HubError",
    "IdentityNameError",
    "ObservationWriter",
    "ScreenError",
    "ScreenTable",
    "SpineError",
    "StrategyKernel",
    "StrategyRuleError",
    "TimestampError",
    "canonical_json",
    "canonicalize",
    "compute_features",
    "feature_row",
    "feature_specs",
    "fold_bars",
    "load_batch",
    "series_batch",
    "format_decimal",
    "identity",
    "parse_decimal",
    "parse_timestamp",
    "quantize_decimal",
    "row_delta",
]
