"""Plain-Python oracle for ``svc.pattern_observation``: the patterns a row made from the previous
bar's row snapshot (a ``FeatureUniverse.row`` dict) to the new bar's, with the new bar's close,
compared with ``decimal.Decimal``. Never imports spine.

The rules (docs/contract.md): a cross is ``before fast <= slow, now fast > slow`` (UP) or
``before fast >= slow, now fast < slow`` (DOWN); RSI levels 70 / 30; a Donchian breakout is the
close beyond the previous bar's bound while the current bound is present, its values that bound;
a Bollinger break is ``%b`` crossing 1 / 0. Any comparison with an ABSENT (or missing) value is
false."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from reference.canonical_json import identity

Row = dict[str, dict[str, Any]]

PATTERNS = (
    "MA_CROSS_UP",
    "MA_CROSS_DOWN",
    "MACD_SIGNAL_CROSS_UP",
    "MACD_SIGNAL_CROSS_DOWN",
    "RSI_ENTER_OVERBOUGHT",
    "RSI_LEAVE_OVERBOUGHT",
    "RSI_ENTER_OVERSOLD",
    "RSI_LEAVE_OVERSOLD",
    "DONCHIAN_BREAKOUT_UP",
    "DONCHIAN_BREAKOUT_DOWN",
    "BOLLINGER_BREAK_UP",
    "BOLLINGER_BREAK_DOWN",
)
UP = {
    "MA_CROSS_UP",
    "MACD_SIGNAL_CROSS_UP",
    "RSI_ENTER_OVERBOUGHT",
    "RSI_LEAVE_OVERSOLD",
    "DONCHIAN_BREAKOUT_UP",
    "BOLLINGER_BREAK_UP",
}


def number(row: Row, key: str) -> Decimal | None:
    value = row.get(key)
    if value is None or value["kind"] == "ABSENT":
        return None
    return Decimal(value["value"])


def patterns(before: Row, now: Row, close: Decimal | None) -> list[tuple[str, dict[str, Any]]]:
    """The patterns from ``before`` to ``now`` in schema order, each with its ``values``."""
    found: dict[str, dict[str, Any]] = {}

    def pair(key: str) -> tuple[Decimal, Decimal] | None:
        a, b = number(before, key), number(now, key)
        return None if a is None or b is None else (a, b)

    for fast, slow, name in (
        ("ema_20.value", "sma_20.value", "MA_CROSS"),
        ("macd_12_26_9.line", "macd_12_26_9.signal", "MACD_SIGNAL_CROSS"),
    ):
        f, s = pair(fast), pair(slow)
        if f is None or s is None:
            continue
        values = {fast: now[fast], slow: now[slow]}
        if f[0] <= s[0] and f[1] > s[1]:
            found[f"{name}_UP"] = values
        if f[0] >= s[0] and f[1] < s[1]:
            found[f"{name}_DOWN"] = values
    rsi = pair("rsi_14.value")
    if rsi is not None:
        (a, b), values = rsi, {"rsi_14.value": now["rsi_14.value"]}
        for name, made in (
            ("RSI_ENTER_OVERBOUGHT", a <= 70 < b),
            ("RSI_LEAVE_OVERBOUGHT", b <= 70 < a),
            ("RSI_ENTER_OVERSOLD", b < 30 <= a),
            ("RSI_LEAVE_OVERSOLD", a < 30 <= b),
        ):
            if made:
                found[name] = values
    high, low = pair("donchian_20.high"), pair("donchian_20.low")
    if close is not None and high is not None and close > high[0]:
        found["DONCHIAN_BREAKOUT_UP"] = {"donchian_20.high": before["donchian_20.high"]}
    if close is not None and low is not None and close < low[0]:
        found["DONCHIAN_BREAKOUT_DOWN"] = {"donchian_20.low": before["donchian_20.low"]}
    pb = pair("bb_20_2.percent_b")
    if pb is not None:
        values = {"bb_20_2.percent_b": now["bb_20_2.percent_b"]}
        if pb[0] <= 1 < pb[1]:
            found["BOLLINGER_BREAK_UP"] = values
        if pb[1] < 0 <= pb[0]:
            found["BOLLINGER_BREAK_DOWN"] = values
    return [(name, found[name]) for name in PATTERNS if name in found]


def document(
    instrument_id: str, resolution: str, ts_event: int, pattern: str, values: dict[str, Any]
) -> dict[str, Any]:
    """The ``svc.pattern_observation`` document of one observation."""
    key = {"instrument_id": instrument_id, "resolution": resolution, "pattern": pattern, "ts_event": str(ts_event)}
    return {
        "version": "spine.v2",
        "schema_id": "svc.pattern_observation",
        "schema_version": 1,
        "observation_id": identity("observation_id", key),
        **key,
        "direction": "UP" if pattern in UP else "DOWN",
        "values": values,
    }
