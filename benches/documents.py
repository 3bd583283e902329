"""Realistic documents for the identity benchmarks: what Spine hashes most often."""

from __future__ import annotations

from typing import Any

BASE_NS = 1_700_000_000_000_000_000
MINUTE_NS = 60_000_000_000


def feature_row(n_values: int = 60) -> dict[str, Any]:
    """A svc.feature_row with `n_values` typed values (DECIMAL, INTEGER, ABSENT mixed)."""
    values: dict[str, Any] = {}
    for i in range(n_values):
        key = f"feat_{i:02d}_{'rsi' if i % 3 else 'ema'}.value"
        if i % 10 == 9:
            values[key] = {"kind": "ABSENT", "reason": "WARMING_UP", "bars_seen": i, "bars_needed": 200}
        elif i % 7 == 6:
            values[key] = {"kind": "INTEGER", "value": i * 1000}
        else:
            values[key] = {"kind": "DECIMAL", "value": f"{100 + i}.{(i * 37) % 10000:04d}", "scale": 4}
    return {
        "version": "spine.v2",
        "schema_id": "svc.feature_row",
        "schema_version": 1,
        "instrument_id": "BTCUSDT-PERP.SIM",
        "resolution": "1m",
        "ts_event": str(BASE_NS),
        "warm": True,
        "values": values,
    }


def bar_page(n_bars: int = 500) -> dict[str, Any]:
    """A svc.bar_envelope page of `n_bars` 1-minute bars."""
    bars = [
        {
            "sequence": i + 1,
            "ts_event": str(BASE_NS + (i + 1) * MINUTE_NS),
            "open": f"{27000 + i % 97}.{i % 100:02d}",
            "high": f"{27010 + i % 97}.00",
            "low": f"{26990 + i % 97}.50",
            "close": f"{27005 + i % 97}.25",
            "volume": f"{i % 50}.{(i * 7919) % 1000000:06d}",
        }
        for i in range(n_bars)
    ]
    return {
        "version": "spine.v2",
        "schema_id": "svc.bar_envelope",
        "schema_version": 1,
        "instrument_id": "BTCUSDT.SIM",
        "bar_type": "BTCUSDT.SIM-1-MINUTE-LAST-INTERNAL",
        "bars": bars,
        "next_cursor": None,
    }


def config() -> dict[str, Any]:
    """An 8-key feature config, the shape hashed into a config_hash."""
    return {
        "feature_id": "rsi_14",
        "feature_version": "1.0.0",
        "implementation": "spine_core.features.rsi",
        "input_kind": "BAR_CLOSE",
        "parameters": {"period": "14", "threshold": "70"},
        "warmup": {"warmupBars": 15},
        "outputs": [{"name": "value", "type": "DECIMAL", "scale": 4, "refresh": "BAR_CLOSE"}],
        "schema_version": 1,
    }


DOCUMENTS = {"feature_row_60": feature_row, "bar_page_500": bar_page, "config_8": config}
