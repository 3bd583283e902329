"""Plain numpy/pandas reference implementations of the feature kernels. Never imports spine.

Every function takes float64 arrays (one value per closed bar, oldest first) and returns
float64 arrays of the same length with NaN where the indicator is warming up or undefined.
Windows are computed whole (two-pass over each window, via ``sliding_window_view``), not with
the rolling sums the kernels use, so the two agree only through the mathematics.

``quantize`` turns a float into the decimal string the wire carries: the exact binary value
rounded half to even at the declared scale (``Decimal(float)`` is exact).
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal

import numpy as np
import numpy.typing as npt
import pandas as pd
from numpy.lib.stride_tricks import sliding_window_view

Array = npt.NDArray[np.float64]


def quantize(value: float, scale: int) -> str:
    """The decimal string of ``value`` at ``scale``, half to even, without a negative zero."""
    text = str(Decimal(value).quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_EVEN))
    return text[1:] if text.startswith("-") and set(text[1:]) <= {"0", "."} else text


def _pad(values: Array, n: int) -> Array:
    out = np.full(n, np.nan)
    out[n - len(values) :] = values
    return out


def _windows(x: Array, period: int) -> Array:
    if len(x) < period:
        return np.empty((0, period))
    return sliding_window_view(x, period)


def sma(close: Array, period: int) -> Array:
    return _pad(_windows(close, period).mean(axis=1), len(close))


def ema(close: Array, period: int) -> Array:
    """Seeded with the first close, ``alpha = 2 / (period + 1)``; warm from bar ``period``."""
    out = pd.Series(close).ewm(span=period, adjust=False).mean().to_numpy()
    out[: period - 1] = np.nan
    return out


def _wilder(values: Array, period: int) -> Array:
    """Wilder smoothing seeded with the simple mean of the first ``period`` values."""
    out = np.full(len(values), np.nan)
    if len(values) < period:
        return out
    avg = float(np.sum(values[:period])) / period
    out[period - 1] = avg
    for i in range(period, len(values)):
        avg = (avg * (period - 1) + values[i]) / period
        out[i] = avg
    return out


def rsi(close: Array, period: int) -> Array:
    """Wilder RSI (TA-Lib): 0..100; NaN when both averages are zero."""
    change = np.diff(close)
    gain = _wilder(np.where(change > 0, change, 0.0), period)
    loss = _wilder(np.where(change < 0, -change, 0.0), period)
    total = gain + loss
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.where(total > 0, 100.0 * gain / total, np.nan)
    return _pad(value, len(close))


def atr(high: Array, low: Array, close: Array, period: int) -> Array:
    """Wilder ATR (TA-Lib): true ranges from the second bar, seeded with their mean."""
    prev = close[:-1]
    h, lo = high[1:], low[1:]
    tr = np.maximum(h - lo, np.maximum(np.abs(h - prev), np.abs(lo - prev)))
    return _pad(_wilder(tr, period), len(close))


def bollinger(close: Array, period: int, k: float) -> tuple[Array, Array, Array, Array]:
    """mid, upper, lower (population std), percent_b (NaN for a zero-width band)."""
    w = _windows(close, period)
    mid = w.mean(axis=1)
    std = np.sqrt(((w - mid[:, None]) ** 2).mean(axis=1))
    flat = np.all(w == w[:, :1], axis=1)
    std = np.where(flat, 0.0, std)
    upper, lower = mid + k * std, mid - k * std
    c = close[period - 1 :]
    with np.errstate(invalid="ignore", divide="ignore"):
        pct = np.where(std > 0, (c - lower) / (upper - lower), np.nan)
    n = len(close)
    return _pad(mid, n), _pad(upper, n), _pad(lower, n), _pad(pct, n)


def macd(close: Array, fast: int, slow: int, signal: int) -> tuple[Array, Array, Array]:
    """line = EMA(fast) - EMA(slow); signal = EMA(signal) of the line from bar ``slow``."""
    s = pd.Series(close)
    line = (s.ewm(span=fast, adjust=False).mean() - s.ewm(span=slow, adjust=False).mean()).to_numpy()
    sig = np.full(len(close), np.nan)
    if len(close) >= slow:
        sig[slow - 1 :] = pd.Series(line[slow - 1 :]).ewm(span=signal, adjust=False).mean().to_numpy()
    warm = slow + signal - 1
    line = line.copy()
    line[: warm - 1] = np.nan
    sig[: warm - 1] = np.nan
    return line, sig, line - sig


def roc(close: Array, period: int) -> Array:
    """Percent change against the close ``period`` bars earlier."""
    out = np.full(len(close), np.nan)
    base = close[:-period] if period < len(close) else np.empty(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.where(base != 0, 100.0 * (close[period:] - base) / base, np.nan)
    out[period:] = value
    return out


def realized_vol(close: Array, period: int, annualization: int = 1) -> Array:
    """Sample std (ddof 1) of the last ``period`` log returns, times sqrt(annualization)."""
    prev, cur = close[:-1], close[1:]
    valid = (prev > 0) & (cur > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(valid, np.log(np.where(valid, cur / np.where(prev > 0, prev, 1.0), 1.0)), np.nan)
    w = _windows(r, period)
    value = w.std(axis=1, ddof=1) * np.sqrt(annualization)
    flat = np.all(w == w[:, :1], axis=1)
    value = np.where(flat, 0.0, value)
    return _pad(value, len(close))


def volume_zscore(volume: Array, period: int) -> Array:
    w = _windows(volume, period)
    mean = w.mean(axis=1)
    std = np.sqrt(((w - mean[:, None]) ** 2).mean(axis=1))
    flat = np.all(w == w[:, :1], axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(flat, np.nan, (volume[period - 1 :] - mean) / std)
    return _pad(z, len(volume))


def vwap(high: Array, low: Array, close: Array, volume: Array, period: int) -> Array:
    tp = (high + low + close) / 3.0
    pv = _windows(tp * volume, period).sum(axis=1)
    v = _windows(volume, period).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.where(v > 0, pv / v, np.nan)
    return _pad(value, len(close))


def donchian(high: Array, low: Array, period: int) -> tuple[Array, Array]:
    n = len(high)
    return _pad(_windows(high, period).max(axis=1), n), _pad(_windows(low, period).min(axis=1), n)


def trend(close: Array, period: int, scale: int, threshold: str = "0") -> tuple[list[str | None], list[str | None]]:
    """(ratio, sign) as wire strings: ratio = close / SMA - 1 at ``scale``; the sign compares
    the published (rounded) ratio with ``threshold``. None where warming or undefined."""
    average = sma(close, period)
    band = Decimal(threshold)
    ratios: list[str | None] = []
    signs: list[str | None] = []
    for c, a in zip(close, average, strict=True):
        if not (a > 0):
            ratios.append(None)
            signs.append(None)
            continue
        text = quantize(c / a - 1.0, scale)
        value = Decimal(text)
        ratios.append(text)
        signs.append("1" if value > band else "-1" if value < -band else "0")
    return ratios, signs


def stochastic(high: Array, low: Array, close: Array, period: int, smoothing: int) -> tuple[Array, Array]:
    """(%K, %D): %K = 100 * (close - lowest low) / (highest high - lowest low) over ``period``
    bars, NaN where the window has no range; %D = the mean of the last ``smoothing`` %K, summed
    oldest first, NaN unless all of them are defined. Both NaN before bar
    ``period + smoothing - 1``."""
    n = len(close)
    k = np.full(n, np.nan)
    for end in range(period - 1, n):
        hh, ll = max(high[end + 1 - period : end + 1]), min(low[end + 1 - period : end + 1])
        if hh > ll:
            k[end] = 100.0 * (close[end] - ll) / (hh - ll)
    d = np.full(n, np.nan)
    for end in range(period + smoothing - 2, n):
        window = [float(x) for x in k[end + 1 - smoothing : end + 1]]
        if not any(np.isnan(window)):
            total = -0.0
            for x in window:
                total += x
            d[end] = total / smoothing
    k[: period + smoothing - 2] = np.nan
    return k, d
