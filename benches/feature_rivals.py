"""The ways to warm indicator features from cold that the feature benchmarks compare.

Every rival computes the six indicators TA-Lib also has, with the parameters of Spine's
default registry: SMA(20), EMA(20), RSI(14), ATR(14), Bollinger(20, k=2: mid/upper/lower) and
MACD(12, 26, 9: line/signal/histogram), over one instrument's closed 1-minute bars, and ends
with the indicators ready at the last bar.

- Spine takes int64 mantissas (uint64 ``ts_event``) in one ``FeatureState.warm`` call;
- TA-Lib takes float64 prices (mantissa / 10^scale, one rounding: the conversion Spine's
  kernels make) and returns every bar's value;
- NautilusTrader takes one ``update_raw`` call per indicator per bar, from Python. It has no
  MACD signal line, so an ``ExponentialMovingAverage(9)`` is fed the MACD line from the bar
  the MACD is first initialized (bar 26, as Spine and TA-Lib start it); its RSI is 0..1; its
  Bollinger bands the typical price, so it is fed (close, close, close).
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

import numpy as np
import numpy.typing as npt
import talib
from nautilus_trader.indicators import (
    AverageTrueRange,
    BollingerBands,
    ExponentialMovingAverage,
    MovingAverageConvergenceDivergence,
    MovingAverageType,
    RelativeStrengthIndex,
    SimpleMovingAverage,
)

from spine.features import FeatureState

MINUTE_NS = 60_000_000_000
PRICE_SCALE = 2
SIZE_SCALE = 3
FEATURE_IDS = ["sma_20", "ema_20", "rsi_14", "atr_14", "bb_20_2", "macd_12_26_9"]
# The row keys every rival yields (Spine's row also has bb_20_2.percent_b, which TA-Lib lacks).
KEYS = [
    "sma_20.value",
    "ema_20.value",
    "rsi_14.value",
    "atr_14.value",
    "bb_20_2.mid",
    "bb_20_2.upper",
    "bb_20_2.lower",
    "macd_12_26_9.line",
    "macd_12_26_9.signal",
    "macd_12_26_9.histogram",
]
COLUMNS = ("ts_event", "open", "high", "low", "close", "volume")
Bars = dict[str, npt.NDArray[Any]]
Floats = dict[str, npt.NDArray[np.float64]]


def make_bars(n: int, seed: int) -> Bars:
    """n gap-free closed 1-minute bars of one instrument ending on a day boundary: integer
    mantissas at price scale 2 and size scale 3.

    A log random walk whose volatility clusters (log-volatility is an AR(1) with a half-life
    of about 35 bars) and has fat tails (Student t, 4 degrees of freedom); opens mostly at the
    previous close, sometimes a tick away; wicks scale with the bar's volatility, so
    high >= max(open, close) and low <= min(open, close); volume is log-normal and rises with
    volatility.
    """
    rng = np.random.default_rng(seed)
    day = 19_700 * 86_400 * 10**9
    ts = (day - (np.arange(n, 0, -1, dtype=np.int64) - 1) * MINUTE_NS).astype(np.uint64)
    start = float(np.exp(rng.uniform(np.log(20.0), np.log(400.0))))  # $20 .. $400
    phi, taps = 0.98, 400
    shocks = rng.normal(0.0, 0.1, n + taps)
    log_vol = np.convolve(shocks, phi ** np.arange(taps), mode="valid")[:n]  # AR(1), stationary
    sigma = 0.0007 * np.exp(log_vol)  # per-minute return volatility, ~1.4% a 390-minute day
    returns = sigma * rng.standard_t(4, n) / np.sqrt(2.0)  # unit-variance t(4)
    scale = 10**PRICE_SCALE
    close = np.maximum(np.rint(start * np.exp(np.cumsum(returns)) * scale), 1).astype(np.int64)
    gap = rng.integers(-1, 2, n) * (rng.random(n) < 0.2)
    open_ = np.maximum(np.concatenate([[close[0]], close[:-1]]) + gap, 1).astype(np.int64)
    wick = np.abs(rng.normal(0.0, 1.0, (2, n))) * sigma * close * 0.6
    high = (np.maximum(open_, close) + np.rint(wick[0])).astype(np.int64)
    low = np.maximum(np.minimum(open_, close) - np.rint(wick[1]), 1).astype(np.int64)
    shares = np.exp(rng.normal(7.0, 0.8, n) + 1.5 * log_vol)
    volume = np.rint(shares * 10**SIZE_SCALE).astype(np.int64)
    return {"ts_event": ts, "open": open_, "high": high, "low": low, "close": close, "volume": volume}


def as_floats(bars: Bars) -> Floats:
    """float64 prices and sizes: mantissa / 10^scale."""
    p, s = 10.0**PRICE_SCALE, 10.0**SIZE_SCALE
    out = {k: bars[k].astype(np.float64) / p for k in ("open", "high", "low", "close")}
    out["volume"] = bars["volume"].astype(np.float64) / s
    return out


def quantize(value: float, scale: int) -> str:
    """The decimal string of ``value`` (exact binary value) at ``scale``, half to even,
    without a negative zero: what Spine's wire carries."""
    text = str(Decimal(value).quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_EVEN))
    return text[1:] if text.startswith("-") and set(text[1:]) <= {"0", "."} else text


# Spine


def spine_warm(bars: Bars) -> FeatureState:
    """Cold state for one instrument, warmed from its whole columns in one call."""
    state = FeatureState(price_scale=PRICE_SCALE, size_scale=SIZE_SCALE, feature_ids=FEATURE_IDS)
    state.warm(*(bars[k] for k in COLUMNS))
    return state


def spine_last(bars: Bars) -> dict[str, dict[str, Any]]:
    """Spine's wire values at the last bar, keyed as in ``KEYS``."""
    row = spine_warm(bars).row()
    return {key: row[key] for key in KEYS}


# TA-Lib


def talib_features(f: Floats) -> tuple[npt.NDArray[np.float64], ...]:
    """Every bar's values, in ``KEYS`` order (NaN while warming up)."""
    high, low, close = f["high"], f["low"], f["close"]
    upper, mid, lower = talib.BBANDS(close, timeperiod=20, nbdevup=2.0, nbdevdn=2.0, matype=talib.MA_Type.SMA)
    line, signal, hist = talib.MACD(close, fastperiod=12, slowperiod=26, signalperiod=9)
    return (
        talib.SMA(close, timeperiod=20),
        talib.EMA(close, timeperiod=20),
        talib.RSI(close, timeperiod=14),
        talib.ATR(high, low, close, timeperiod=14),
        mid,
        upper,
        lower,
        line,
        signal,
        hist,
    )


def talib_last(f: Floats) -> dict[str, float]:
    return {key: float(values[-1]) for key, values in zip(KEYS, talib_features(f), strict=True)}


# NautilusTrader


def nautilus_features(f: Floats) -> dict[str, float]:
    """Fresh indicators fed every bar with ``update_raw``; the values at the last bar."""
    sma = SimpleMovingAverage(20)
    ema = ExponentialMovingAverage(20)
    rsi = RelativeStrengthIndex(14, MovingAverageType.WILDER)
    atr = AverageTrueRange(14, MovingAverageType.WILDER)
    bb = BollingerBands(20, 2.0)
    macd = MovingAverageConvergenceDivergence(12, 26, MovingAverageType.EXPONENTIAL)
    signal = ExponentialMovingAverage(9)
    # Python floats: the per-bar loop is the rival's own cost, not numpy scalar unboxing.
    for h, lo, c in zip(f["high"].tolist(), f["low"].tolist(), f["close"].tolist(), strict=True):
        sma.update_raw(c)
        ema.update_raw(c)
        rsi.update_raw(c)
        atr.update_raw(h, lo, c)
        bb.update_raw(c, c, c)
        macd.update_raw(c)
        if macd.initialized:
            signal.update_raw(macd.value)
    return {
        "sma_20.value": sma.value,
        "ema_20.value": ema.value,
        "rsi_14.value": 100.0 * rsi.value,
        "atr_14.value": atr.value,
        "bb_20_2.mid": bb.middle,
        "bb_20_2.upper": bb.upper,
        "bb_20_2.lower": bb.lower,
        "macd_12_26_9.line": macd.value,
        "macd_12_26_9.signal": signal.value,
        "macd_12_26_9.histogram": macd.value - signal.value,
    }
