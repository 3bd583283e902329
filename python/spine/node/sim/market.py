"""The simulated market: seeded, deterministic, computable for any minute without replaying
the past, so live emission and history answers agree to the tick.

Per instrument, the log price is a slow multi-scale wave (random phases and periods from the
seed) plus per-minute noise; volatility clusters because the noise scale and the trade rate
are modulated by a second slow wave. Each minute draws its own trades (Poisson count: zero is
a quiet minute with no trades at all), quotes every ten seconds, and the venue's candle
(a flat zero-volume candle for a quiet minute; now and then the candle feed skips a minute,
which the node sees as an EXTERNAL gap). Prices and sizes are integer mantissas at the
instrument's precisions: nothing here passes through a float on its way to the wire except
the model itself, which is rounded once to the tick.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

__all__ = ["Candle", "Minute", "Profile", "SimMarket", "MINUTE_NS"]

MINUTE_NS = 60 * 10**9
QUOTES_PER_MINUTE = 6


@dataclass(frozen=True)
class Profile:
    """One instrument's market: reference level, precisions and liquidity."""

    level: float
    price_precision: int
    size_precision: int
    trades_per_minute: float
    volatility: float = 0.0008  # per-minute log-return scale


@dataclass(frozen=True)
class Candle:
    """A venue 1-minute candle as mantissas (``ts_event`` is the close)."""

    ts_event: int
    open: int
    high: int
    low: int
    close: int
    volume: int


@dataclass(frozen=True)
class Minute:
    """Everything one instrument emits in the minute ending at ``end``."""

    end: int
    #: ``(ts, price, size, buyer_aggressor)``, time-ordered; empty in a quiet minute.
    trades: list[tuple[int, int, int, bool]] = field(default_factory=list)
    #: ``(ts, bid, ask, bid_size, ask_size)``.
    quotes: list[tuple[int, int, int, int, int]] = field(default_factory=list)
    #: The venue candle; ``None`` when the venue's feed skipped the minute.
    candle: Candle | None = None


class SimMarket:
    """The market of a universe of profiles under one seed."""

    def __init__(self, profiles: list[Profile], *, seed: int = 7, candle_skip: float = 0.002) -> None:
        self.profiles = profiles
        self.seed = seed
        self.candle_skip = candle_skip
        waves = np.random.default_rng([seed, 0xC0FFEE])
        # Periods from 20 minutes to 30 days; amplitudes grow like sqrt(period) (a walk's spread).
        periods = np.geomspace(20.0, 43_200.0, 6)
        self._price_waves = [
            (2 * math.pi / periods, waves.uniform(0, 2 * math.pi, (len(profiles), 6)), np.sqrt(periods))
        ]
        self._vol_phase = waves.uniform(0, 2 * math.pi, (len(profiles), 3))
        self._minute = lru_cache(maxsize=4096)(self._make_minute)

    def _log_level(self, index: int, t: float) -> float:
        omega, phase, amplitude = self._price_waves[0]
        p = self.profiles[index]
        return math.log(p.level) + p.volatility * 0.35 * float(np.sum(amplitude * np.sin(omega * t + phase[index])))

    def activity(self, index: int, minute: int) -> float:
        """The volatility-clustering factor of a minute (about 0.4 to 2.5)."""
        t = float(minute)
        ph = self._vol_phase[index]
        wave = math.sin(t / 97.0 + ph[0]) + 0.6 * math.sin(t / 433.0 + ph[1]) + 0.4 * math.sin(t / 2017.0 + ph[2])
        return math.exp(0.45 * wave)

    def price_at(self, index: int, minute: int) -> int:
        """The model price (mantissa) at the close of ``minute`` (absolute minute count)."""
        p = self.profiles[index]
        rng = np.random.default_rng([self.seed, index, minute, 1])
        noise = rng.normal(0.0, p.volatility * self.activity(index, minute))
        return max(1, round(math.exp(self._log_level(index, float(minute)) + noise) * 10**p.price_precision))

    def minute(self, index: int, end_ns: int) -> Minute:
        """What instrument ``index`` emits in the minute closing at ``end_ns`` (a whole minute)."""
        if end_ns % MINUTE_NS:
            raise ValueError(f"end_ns {end_ns} is not a whole minute")
        return self._minute(index, end_ns)

    def _make_minute(self, index: int, end_ns: int) -> Minute:
        p = self.profiles[index]
        m = end_ns // MINUTE_NS
        start_ns = end_ns - MINUTE_NS
        rng = np.random.default_rng([self.seed, index, m, 2])
        first, last = self.price_at(index, m - 1), self.price_at(index, m)
        activity = self.activity(index, m)
        n = int(rng.poisson(p.trades_per_minute * activity))
        trades = []
        if n:
            offsets = np.sort(rng.integers(1, MINUTE_NS, n))
            fraction = offsets / MINUTE_NS
            path = first + (last - first) * fraction
            wiggle = rng.normal(0.0, p.volatility * activity * 0.5, n) * first
            prices = np.maximum(np.rint(path + wiggle), 1).astype(np.int64)
            prices[-1] = last  # the minute closes at the model price
            sizes = np.maximum(np.rint(rng.lognormal(0.0, 1.0, n) * 10**p.size_precision), 1).astype(np.int64)
            previous = first
            for ts, price, size in zip(offsets.tolist(), prices.tolist(), sizes.tolist(), strict=True):
                trades.append((start_ns + ts, price, size, price >= previous))
                previous = price
        spread = max(1, round(last * 0.0001))
        quotes = []
        for k in range(QUOTES_PER_MINUTE):
            ts = start_ns + k * (MINUTE_NS // QUOTES_PER_MINUTE)
            mid = first + (last - first) * k // QUOTES_PER_MINUTE
            bid = max(1, mid - spread // 2)
            depth = 10**p.size_precision
            quotes.append((ts, bid, bid + spread, depth * int(rng.integers(1, 20)), depth * int(rng.integers(1, 20))))
        candle = None
        if rng.random() >= self.candle_skip:
            if trades:
                prices_only = [t[1] for t in trades]
                candle = Candle(
                    end_ns,
                    prices_only[0],
                    max(prices_only),
                    min(prices_only),
                    prices_only[-1],
                    sum(t[2] for t in trades),
                )
            else:
                candle = Candle(end_ns, last, last, last, last, 0)
        return Minute(end=end_ns, trades=trades, quotes=quotes, candle=candle)

    def candles(self, index: int, start_ns: int, end_ns: int) -> list[Candle]:
        """The venue's candles closing in ``(start_ns, end_ns]`` (the history endpoint)."""
        first = (start_ns // MINUTE_NS + 1) * MINUTE_NS
        out = []
        for end in range(first, end_ns + 1, MINUTE_NS):
            candle = self._make_minute(index, end).candle
            if candle is not None:
                out.append(candle)
        return out
