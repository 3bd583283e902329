"""One instrument on the screener (``svc.screener_instrument``): its rows at the seven
resolutions, each one's ``svc.feature_state`` summary, and the confluence vote derived from
those same rows, never from a second read.

The vote per timeframe (thresholds in docs/contract.md): a timeframe votes when its row is
warm (no value ABSENT WARMING_UP or GAP_IN_INPUT); its trend vote is ``trend_200.sign`` (price
against its 200-bar average), its momentum vote +1 above RSI(14) 55, -1 below 45, else 0. A
value that is ABSENT votes 0 even in a warm row (INPUT_UNAVAILABLE)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from spine._core import WIRE_VERSION

__all__ = ["MOMENTUM_DOWN", "MOMENTUM_UP", "confluence", "feature_state", "instrument_document"]

TREND_KEY = "trend_200.sign"
MOMENTUM_KEY = "rsi_14.value"
#: RSI(14) above this votes +1, below ``MOMENTUM_DOWN`` -1: a band around 50 so that noise
#: about the midline does not flip the vote.
MOMENTUM_UP = Decimal(55)
MOMENTUM_DOWN = Decimal(45)
_NOT_WARM = ("WARMING_UP", "GAP_IN_INPUT")


def feature_state(row: dict[str, Any], bars_folded: int, channel: str, source_node: str) -> dict[str, Any]:
    """The ``svc.feature_state`` summary of one ``svc.feature_row``."""
    absent = [value for value in row["values"].values() if value["kind"] == "ABSENT"]
    return {
        "version": WIRE_VERSION,
        "schema_id": "svc.feature_state",
        "schema_version": 1,
        "instrument_id": row["instrument_id"],
        "resolution": row["resolution"],
        "ts_event": row["ts_event"],
        "bars_folded": bars_folded,
        "warm": not any(value["reason"] in _NOT_WARM for value in absent),
        "absent": len(absent),
        "channel": channel,
        "source_node": source_node,
    }


def confluence(rows: list[dict[str, Any]], states: list[dict[str, Any]]) -> dict[str, Any]:
    """The vote over ``rows`` and their ``states`` (same order)."""
    timeframes = [_timeframe(row, state["warm"]) for row, state in zip(rows, states, strict=True)]
    return {
        "timeframes": timeframes,
        "trend": sum(t["trend"] for t in timeframes),
        "momentum": sum(t["momentum"] for t in timeframes),
        "voting": sum(t["voting"] for t in timeframes),
    }


def _timeframe(row: dict[str, Any], warm: bool) -> dict[str, Any]:
    trend = _present(row, TREND_KEY) if warm else None
    momentum = _present(row, MOMENTUM_KEY) if warm else None
    return {
        "resolution": row["resolution"],
        "voting": warm,
        "trend": 0 if trend is None else int(trend),
        "momentum": 0 if momentum is None else (1 if momentum > MOMENTUM_UP else -1 if momentum < MOMENTUM_DOWN else 0),
    }


def _present(row: dict[str, Any], key: str) -> Decimal | None:
    value = row["values"].get(key)
    return None if value is None or value["kind"] == "ABSENT" else Decimal(value["value"])


def instrument_document(instrument_id: str, rows: list[dict[str, Any]], states: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "version": WIRE_VERSION,
        "schema_id": "svc.screener_instrument",
        "schema_version": 1,
        "instrument_id": instrument_id,
        "rows": rows,
        "states": states,
        "confluence": confluence(rows, states),
    }
