"""The exception tree. Every error Spine raises derives from :class:`SpineError`.

Where Spine stands in for a stdlib behaviour (refusing a value), the error also derives from
``ValueError`` so ``except ValueError`` keeps working. Messages start with a wire SYMBOL.
"""

from __future__ import annotations

__all__ = [
    "SpineError",
    "CanonicalJsonError",
    "DecimalError",
    "TimestampError",
    "IdentityNameError",
    "BarsError",
    "FeatureError",
    "HubError",
    "ScreenError",
    "StrategyRuleError",
    "DiscoveryNotRegistered",
]


class SpineError(Exception):
    """Root of every error Spine raises.

    ``symbol`` is the wire name of the condition (the first word of the message).
    """

    symbol: str = "SPINE_ERROR"

    def __init__(self, message: str, symbol: str | None = None, path: str | None = None) -> None:
        super().__init__(message)
        if symbol is not None:
            self.symbol = symbol
        self.path = path


class CanonicalJsonError(SpineError, ValueError):
    """A value or JSON text refused by canonical JSON (pinned decision 2).

    ``path`` is the JSON path of the refusal, e.g. ``$.values["rsi_14.value"][2]``;
    ``symbol`` names the reason (FLOAT_REFUSED, INTEGER_OUT_OF_RANGE, NON_STRING_KEY,
    DUPLICATE_KEY, LONE_SURROGATE, INVALID_UTF8, NESTING_TOO_DEEP, INVALID_JSON,
    UNSUPPORTED_TYPE).
    """

    symbol = "INVALID_JSON"
    path: str | None


class DecimalError(SpineError, ValueError):
    """A decimal string refused by pinned decision 4, or a bad scale."""

    symbol = "INVALID_DECIMAL"


class TimestampError(SpineError, ValueError):
    """A nanosecond timestamp string refused by pinned decision 4."""

    symbol = "INVALID_TIMESTAMP"


class IdentityNameError(SpineError, ValueError):
    """An identity name outside ``^[a-z][a-z0-9_]{0,63}$``."""

    symbol = "INVALID_IDENTITY_NAME"


class BarsError(SpineError, ValueError):
    """Bar input or a fold request refused: unsorted or misaligned bars, mismatched column
    lengths, bad precision, an unknown resolution or channel, an invalid coverage span."""

    symbol = "INVALID_BARS"


class FeatureError(SpineError, ValueError):
    """A feature selection, spec parameter or bar input refused by the feature kernels:
    an unknown or duplicate feature id, a bad parameter, unsorted or inconsistent bars,
    mismatched column lengths, a bad precision, or a column that is not a contiguous 1-D
    int64/uint64 array."""

    symbol = "INVALID_FEATURE_INPUT"


class HubError(SpineError, ValueError):
    """A refusal of the fan-out hub: an unknown subscriber id, a zero queue bound, or more
    distinct event kinds than a hub tells apart."""

    symbol = "INVALID_SUBSCRIPTION"


class ScreenError(SpineError, ValueError):
    """A screen definition the screener cannot evaluate (``INVALID_SCREEN``: a key outside the
    registry, BETWEEN with low above high, nesting deeper than 4, a repeated sort key, or
    anything outside the svc.screen_definition grammar), or a row or key declaration a
    ``ScreenTable`` cannot hold (``INVALID_SCREEN_TABLE``). The message names the JSON path or
    key, what was wrong and what is allowed."""

    symbol = "INVALID_SCREEN"


class StrategyRuleError(SpineError, ValueError):
    """A strategy's features or rules the rule kernel cannot build (``INVALID_STRATEGY``): a
    reserved (``bar``) or repeated feature id, an unknown implementation or a bad parameter
    (naming the feature and parameter), a rule condition outside the grammar or naming a key
    that is not readable (naming the rule and the JSON path), a bad scale, more than 32 rules
    or a repeated rule name. The message says what is allowed."""

    symbol = "INVALID_STRATEGY"


class DiscoveryNotRegistered(SpineError, LookupError):
    """A coverage ledger read before discovery was registered (the route answers 404, never an
    empty snapshot)."""

    symbol = "DISCOVERY_NOT_REGISTERED"
