"""Feature kernels against the plain numpy/pandas references, bar by bar.

Every default feature runs over fixed and random series; each published value must equal
the reference rounded half to even at the declared scale. Floating-point order of operations
differs (rolling sums against whole-window sums), so a value whose exact result sits within
rounding noise of a half-unit boundary may land one unit apart: that is allowed, counted, and
must stay rare. Warm-up boundaries are checked exactly to the bar.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from reference import indicators as ref
from spine.features import FeatureState, compute_features, feature_specs

Array = npt.NDArray[np.float64]
Columns = dict[str, Any]
MINUTE = 60_000_000_000


def make_bars(
    seed: int,
    n: int,
    *,
    price_scale: int = 2,
    size_scale: int = 3,
    base: int = 3_700_000,
    step: int = 900,
    quiet: float = 0.1,
) -> Columns:
    """A random walk of mantissas with wicks, some zero-volume bars and some repeated closes."""
    rng = np.random.default_rng(seed)
    close = base + np.cumsum(rng.integers(-step, step + 1, n) * (rng.random(n) > quiet))
    close = np.maximum(close, 1).astype(np.int64)
    open_ = np.concatenate([[close[0]], close[:-1]]).astype(np.int64)
    high = (np.maximum(open_, close) + rng.integers(0, step, n)).astype(np.int64)
    low = np.maximum(np.minimum(open_, close) - rng.integers(0, step, n), 0).astype(np.int64)
    volume = (rng.integers(0, 50_000, n) * (rng.random(n) > 0.05)).astype(np.int64)
    ts = (np.arange(1, n + 1, dtype=np.uint64) + np.uint64(28_333_000)) * np.uint64(MINUTE)
    return {
        "ts_event": ts,
        "open": open_,
        "high": high,
        "low": low,
        "close": close,
        "volume": volume,
        "price_scale": price_scale,
        "size_scale": size_scale,
    }


def as_floats(cols: Columns) -> dict[str, Array]:
    """The same conversion the kernels make: mantissa / 10^scale, one rounding."""
    p, s = 10.0 ** cols["price_scale"], 10.0 ** cols["size_scale"]
    out = {k: cols[k].astype(np.float64) / p for k in ("open", "high", "low", "close")}
    out["volume"] = cols["volume"].astype(np.float64) / s
    return out


def rows_by_bar(cols: Columns, feature_ids: list[str] | None = None) -> list[dict[str, dict[str, Any]]]:
    state = FeatureState(price_scale=cols["price_scale"], size_scale=cols["size_scale"], feature_ids=feature_ids)
    rows = []
    for i in range(len(cols["ts_event"])):
        state.update(*(int(cols[k][i]) for k in ("ts_event", "open", "high", "low", "close", "volume")))
        rows.append(state.row())
    return rows


def references(f: dict[str, Array]) -> dict[str, tuple[Any, int]]:
    """Row key -> (expected floats or wire strings per bar, declared scale)."""
    h, lo, c, v = f["high"], f["low"], f["close"], f["volume"]
    mid, upper, lower, pct = ref.bollinger(c, 20, 2.0)
    line, signal, hist = ref.macd(c, 12, 26, 9)
    d_high, d_low = ref.donchian(h, lo, 20)
    ratio, sign = ref.trend(c, 200, 6, "0")
    return {
        "sma_20.value": (ref.sma(c, 20), 8),
        "ema_20.value": (ref.ema(c, 20), 8),
        "rsi_14.value": (ref.rsi(c, 14), 4),
        "atr_14.value": (ref.atr(h, lo, c, 14), 8),
        "bb_20_2.mid": (mid, 8),
        "bb_20_2.upper": (upper, 8),
        "bb_20_2.lower": (lower, 8),
        "bb_20_2.percent_b": (pct, 6),
        "macd_12_26_9.line": (line, 8),
        "macd_12_26_9.signal": (signal, 8),
        "macd_12_26_9.histogram": (hist, 8),
        "roc_10.value": (ref.roc(c, 10), 4),
        "rvol_20.value": (ref.realized_vol(c, 20, 1), 8),
        "vol_z_20.value": (ref.volume_zscore(v, 20), 4),
        "vwap_20.value": (ref.vwap(h, lo, c, v, 20), 8),
        "donchian_20.high": (d_high, 8),
        "donchian_20.low": (d_low, 8),
        "trend_200.ratio": (ratio, 6),
        "trend_200.sign": (sign, 0),
    }


def expected_text(expected: Any, i: int, scale: int) -> str | None:
    value = expected[i]
    if isinstance(expected, list):
        return value  # type: ignore[no-any-return]
    return None if np.isnan(value) else ref.quantize(float(value), scale)


def compare(rows: list[dict[str, dict[str, Any]]], key: str, expected: Any, scale: int) -> tuple[int, int]:
    """(values compared, values one unit apart); fails on anything further apart."""
    compared = near = 0
    for i, row in enumerate(rows):
        got, want = row[key], expected_text(expected, i, scale)
        if want is None:
            assert got["kind"] == "ABSENT", (key, i, got)
            continue
        if key.endswith(".sign"):
            assert got == {"kind": "INTEGER", "value": want}, (key, i)
            compared += 1
            continue
        assert got["kind"] == "DECIMAL" and got["scale"] == scale, (key, i, got)
        units = abs(Decimal(got["value"]) - Decimal(want)).scaleb(scale)
        assert units <= 1, (key, i, got["value"], want)
        assert len(got["value"].partition(".")[2]) == scale
        compared += 1
        near += units == 1
    return compared, near


CASES = [
    pytest.param(dict(seed=1, n=600), id="btc-like"),
    pytest.param(dict(seed=2, n=450, price_scale=5, base=12_345, step=40), id="small-price"),
    pytest.param(dict(seed=3, n=450, price_scale=0, size_scale=0, base=500, step=3, quiet=0.6), id="coarse-ticks"),
    pytest.param(dict(seed=4, n=300, price_scale=8, size_scale=8, base=2_500_000_000, step=3_000_000), id="scale-8"),
]


@pytest.mark.parametrize("kwargs", CASES)
def test_every_default_feature_matches_the_reference(kwargs: dict[str, Any]) -> None:
    cols = make_bars(**kwargs)
    rows = rows_by_bar(cols)
    total = near = 0
    for key, (expected, scale) in references(as_floats(cols)).items():
        c, n = compare(rows, key, expected, scale)
        total, near = total + c, near + n
    assert total > 4000
    # One-unit differences come only from half-boundary ties in float noise: rare.
    assert near <= max(3, total // 250), (near, total)


def test_fixed_series_values_by_hand() -> None:
    # Closes 1..30 at scale 0: every average is exact.
    n = 30
    c = np.arange(1, n + 1, dtype=np.int64)
    cols = {
        "ts_event": np.arange(1, n + 1, dtype=np.uint64),
        "open": c,
        "high": c,
        "low": c,
        "close": c,
        "volume": np.full(n, 2, dtype=np.int64),
    }
    row = compute_features(
        **cols,
        price_scale=0,
        size_scale=0,
        feature_ids=["sma_20", "rsi_14", "roc_10", "donchian_20", "vwap_20", "vol_z_20"],
    )
    assert row["sma_20.value"] == {"kind": "DECIMAL", "value": "20.50000000", "scale": 8}
    assert row["rsi_14.value"] == {"kind": "DECIMAL", "value": "100.0000", "scale": 4}
    assert row["roc_10.value"] == {"kind": "DECIMAL", "value": "50.0000", "scale": 4}
    assert row["donchian_20.high"]["value"] == "30.00000000"
    assert row["donchian_20.low"]["value"] == "11.00000000"
    assert row["vwap_20.value"]["value"] == "20.50000000"
    assert row["vol_z_20.value"] == {"kind": "ABSENT", "reason": "INPUT_UNAVAILABLE"}


# warm-up, exactly to the bar

WARMUPS = {spec["feature_id"]: spec["warmup"]["warmupBars"] for spec in feature_specs()}


def test_warmups_are_declared() -> None:
    assert WARMUPS == {
        "sma_20": 20,
        "ema_20": 20,
        "rsi_14": 15,
        "atr_14": 15,
        "bb_20_2": 20,
        "macd_12_26_9": 34,
        "roc_10": 11,
        "rvol_20": 21,
        "vol_z_20": 20,
        "vwap_20": 20,
        "donchian_20": 20,
        "trend_200": 200,
    }


def test_warm_up_boundary_is_exact_for_every_feature() -> None:
    cols = make_bars(11, 205, quiet=0.0)
    cols["volume"] = cols["volume"] + 1  # no zero-volume window
    rows = rows_by_bar(cols)
    for key in rows[0]:
        needed = WARMUPS[key.partition(".")[0]]
        for i, row in enumerate(rows):
            seen = i + 1
            if seen < needed:
                assert row[key] == {
                    "kind": "ABSENT",
                    "reason": "WARMING_UP",
                    "bars_seen": seen,
                    "bars_needed": needed,
                }, (key, seen)
            else:
                assert row[key]["kind"] in ("DECIMAL", "INTEGER"), (key, seen, row[key])
    fresh = FeatureState(price_scale=2, size_scale=3)
    assert all(
        v == {"kind": "ABSENT", "reason": "WARMING_UP", "bars_seen": 0, "bars_needed": WARMUPS[k.partition(".")[0]]}
        for k, v in fresh.row().items()
    )
    assert fresh.last_ts_event is None


# ABSENT reasons


def flat_columns(n: int, price: int, volume: int) -> Columns:
    return {
        "ts_event": np.arange(1, n + 1, dtype=np.uint64),
        "open": np.full(n, price, dtype=np.int64),
        "high": np.full(n, price, dtype=np.int64),
        "low": np.full(n, price, dtype=np.int64),
        "close": np.full(n, price, dtype=np.int64),
        "volume": np.full(n, volume, dtype=np.int64),
    }


def test_undefined_computations_are_input_unavailable_never_zero_or_missing() -> None:
    row = compute_features(**flat_columns(250, 100, 0), price_scale=2, size_scale=0)
    unavailable = {"kind": "ABSENT", "reason": "INPUT_UNAVAILABLE"}
    for key in ("rsi_14.value", "bb_20_2.percent_b", "vol_z_20.value", "vwap_20.value"):
        assert row[key] == unavailable, key
    assert (
        row["bb_20_2.upper"]
        == row["bb_20_2.mid"]
        == row["bb_20_2.lower"]
        == {"kind": "DECIMAL", "value": "1.00000000", "scale": 8}
    )
    assert row["rvol_20.value"]["value"] == "0.00000000"
    assert row["trend_200.sign"] == {"kind": "INTEGER", "value": "0"}
    zero_price = compute_features(**flat_columns(250, 0, 5), price_scale=2, size_scale=0)
    for key in ("roc_10.value", "rvol_20.value", "trend_200.ratio", "trend_200.sign"):
        assert zero_price[key] == unavailable, key
    assert set(row) == set(zero_price) == set(FeatureState(price_scale=0, size_scale=0).keys)


def test_gap_restarts_kernels_with_gap_in_input() -> None:
    cols = make_bars(5, 60)
    state = FeatureState(price_scale=2, size_scale=3, feature_ids=["rsi_14", "sma_20"])
    state.warm(**{k: cols[k] for k in ("ts_event", "open", "high", "low", "close", "volume")})
    assert state.row()["rsi_14.value"]["kind"] == "DECIMAL"
    state.mark_gap()
    assert all(v == {"kind": "ABSENT", "reason": "GAP_IN_INPUT"} for v in state.row().values())
    later = make_bars(6, 20)
    later["ts_event"] = later["ts_event"] + np.uint64(10**15)
    state.warm(**{k: later[k] for k in ("ts_event", "open", "high", "low", "close", "volume")})
    row = state.row()
    assert row["rsi_14.value"]["kind"] == "DECIMAL" and row["sma_20.value"]["kind"] == "DECIMAL"
    state.reset()
    assert state.row()["sma_20.value"]["reason"] == "WARMING_UP"
