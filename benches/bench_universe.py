"""The worst-case minute close: 00:00 UTC, when all seven resolutions (1m, 5m, 15m, 30m, 1h,
4h, 1d) close at once, across INSTRUMENTS instruments, each warmed on 5,000 one-minute bars.

- spine: one ``FeatureUniverse.close_minute`` call with the minute's bars as columns: each
  series takes its bar, folds the six derived buckets it closes, and updates the default
  registry's twelve features (19 outputs) at every resolution. Each round's setup (untimed)
  copies a universe warmed in bulk up to the day's start and closes the day's 1,439 minutes
  before midnight live, so the timed midnight meets the steady state of a running screener
  (open buckets carry running aggregates); every round is the same midnight.
- nautilus: NautilusTrader 1.221 indicator objects of the same kinds (SMA, EMA, RSI, ATR,
  Bollinger, MACD with an EMA signal line, ROC, VWAP, Donchian), one set per instrument and
  resolution, each updated with that resolution's closing bar (bars pre-folded, untimed):
  what a screener wired by hand from nautilus indicators does at midnight.

Before timing, Spine's SMA(20) rows at 1h and 1d are checked against nautilus' SMA fed the
pandas-resampled bars. Smoke mode (CI): SPINE_BENCH_INSTRUMENTS=5 and --benchmark-disable.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from nautilus_trader import indicators as nt
from pytest_benchmark.fixture import BenchmarkFixture

from benches.feature_rivals import PRICE_SCALE, SIZE_SCALE, as_floats, make_bars, quantize
from benches.sizes import BARS, INSTRUMENTS
from spine.features import FeatureUniverse

COLUMNS = ("ts_event", "open", "high", "low", "close", "volume")
RESOLUTION_MINUTES = {"1m": 1, "5m": 5, "15m": 15, "30m": 30, "1h": 60, "4h": 240, "1d": 1440}


def _universe_bars() -> list[dict[str, Any]]:
    """BARS + 1 bars per instrument; the last closes at 00:00 UTC (make_bars ends on a day)."""
    return [make_bars(BARS + 1, seed) for seed in range(INSTRUMENTS)]


_BARS = _universe_bars()


_MATRIX = {k: np.stack([b[k] for b in _BARS]) for k in COLUMNS}
_INDEXES = np.arange(INSTRUMENTS, dtype=np.uint32)
LIVE = 1_439  # the day's minutes before midnight arrive live, as in steady state


def _minute(m: int) -> list[np.ndarray]:
    return [np.ascontiguousarray(_MATRIX[k][:, m]) for k in COLUMNS]


def _day_start_universe() -> FeatureUniverse:
    """Warmed in bulk up to the day's first minute."""
    u = FeatureUniverse()
    for bars in _BARS:
        i = u.add(channel="EXTERNAL", price_precision=PRICE_SCALE, size_precision=SIZE_SCALE)
        u.warm(i, *(np.ascontiguousarray(bars[k][: BARS - LIVE]) for k in COLUMNS))
    return u


_DAY_START = _day_start_universe()
_LIVE_MINUTES = [_minute(m) for m in range(BARS - LIVE, BARS)]
_MIDNIGHT = dict(zip(COLUMNS, _minute(BARS), strict=True))


def _just_before_midnight() -> tuple[tuple[FeatureUniverse], dict[str, Any]]:
    """A copy of the day-start universe that took the day's minutes live up to 23:59: the
    steady state of a running screener (running aggregates, caches as a live fold has them)."""
    u = _DAY_START.copy()
    for minute in _LIVE_MINUTES:
        u.close_minute(_INDEXES, *minute)
    return (u,), {}


def _spine_close(u: FeatureUniverse) -> bytes:
    return u.close_minute(_INDEXES, *(_MIDNIGHT[k] for k in COLUMNS))


def _resampled(bars: dict[str, Any], minutes: int) -> pd.DataFrame:
    f = as_floats(bars)
    frame = pd.DataFrame(f, index=pd.to_datetime(bars["ts_event"].astype(np.int64), unit="ns", utc=True))
    grouped = frame.resample(f"{minutes}min", closed="right", label="right")
    out = grouped.agg({"open": "first", "high": "max", "low": "min", "close": "last", "volume": "sum"})
    return out[grouped.size() == minutes]


class _Nautilus:
    """One resolution's indicator set for one instrument."""

    def __init__(self) -> None:
        self.sma = nt.SimpleMovingAverage(20)
        self.ema = nt.ExponentialMovingAverage(20)
        self.rsi = nt.RelativeStrengthIndex(14, nt.MovingAverageType.WILDER)
        self.atr = nt.AverageTrueRange(14, nt.MovingAverageType.WILDER)
        self.bb = nt.BollingerBands(20, 2.0)
        self.macd = nt.MovingAverageConvergenceDivergence(12, 26, nt.MovingAverageType.EXPONENTIAL)
        self.signal = nt.ExponentialMovingAverage(9)
        self.roc = nt.RateOfChange(11)
        self.vwap = nt.VolumeWeightedAveragePrice()
        self.donchian = nt.DonchianChannel(20)

    def update(self, o: float, h: float, lo: float, c: float, v: float) -> None:
        self.sma.update_raw(c)
        self.ema.update_raw(c)
        self.rsi.update_raw(c)
        self.atr.update_raw(h, lo, c)
        self.bb.update_raw(h, lo, c)
        self.macd.update_raw(c)
        self.signal.update_raw(self.macd.value)
        self.roc.update_raw(c)
        self.vwap.update_raw(c, v, pd.Timestamp(0, tz="UTC"))
        self.donchian.update_raw(h, lo)


def _nautilus_universe() -> tuple[list[list[_Nautilus]], list[list[tuple[float, ...]]]]:
    """Indicator sets warmed on a few bars (untimed), and each resolution's closing bar."""
    sets, closing = [], []
    for bars in _BARS:
        per_resolution, bar_of = [], []
        for minutes in RESOLUTION_MINUTES.values():
            folded = _resampled(bars, minutes)
            rows = list(folded.itertuples(index=False, name=None))
            indicators = _Nautilus()
            for row in rows[-31:-1]:
                indicators.update(*row)
            per_resolution.append(indicators)
            bar_of.append(rows[-1])
        sets.append(per_resolution)
        closing.append(bar_of)
    return sets, closing


def _nautilus_close(sets: list[list[_Nautilus]], closing: list[list[tuple[float, ...]]]) -> None:
    for per_resolution, bar_of in zip(sets, closing, strict=True):
        for indicators, bar in zip(per_resolution, bar_of, strict=True):
            indicators.update(*bar)


def test_spine_rows_agree_with_nautilus_on_resampled_bars() -> None:
    (u,), _ = _just_before_midnight()
    changed = np.frombuffer(_spine_close(u), dtype="<u4").reshape(-1, 2)
    assert changed.tolist() == [[i, r] for i in range(INSTRUMENTS) for r in range(7)]
    for i in range(min(INSTRUMENTS, 3)):
        for resolution in ("1h", "1d"):
            closes = _resampled(_BARS[i], RESOLUTION_MINUTES[resolution])["close"].tolist()
            sma = nt.SimpleMovingAverage(20)
            for c in closes:
                sma.update_raw(c)
            value = u.row(i, resolution)["sma_20.value"]
            if len(closes) < 20:
                assert value["kind"] == "ABSENT"
            else:
                assert value["value"] == quantize(sma.value, int(value["scale"])), (i, resolution)


@pytest.mark.benchmark(group="midnight-close")
@pytest.mark.parametrize("rival", ["spine", "nautilus"])
def test_midnight_close(benchmark: BenchmarkFixture, rival: str) -> None:
    if rival == "spine":
        benchmark.pedantic(_spine_close, setup=_just_before_midnight, rounds=10, iterations=1)
    else:
        sets, closing = _nautilus_universe()
        benchmark.pedantic(_nautilus_close, args=(sets, closing), rounds=5, iterations=1)
