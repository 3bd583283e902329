"""Cold feature warm-up: Spine against TA-Lib and NautilusTrader indicators, side by side, on
the same bars (checked equal at the last bar before timing).

The universe is INSTRUMENTS instruments x 5,000 one-minute bars (integer mantissas at price
scale 2, size scale 3; a random walk with clustered volatility). Each rival starts cold for
each instrument and computes SMA(20), EMA(20), RSI(14), ATR(14), Bollinger(20, 2) and
MACD(12, 26, 9), the parameters of Spine's default registry:

- spine: a fresh ``FeatureState`` with those six feature ids, warmed by one ``warm`` call on
  the instrument's resident uint64/int64 columns (no per-bar Python loop);
- talib: ``talib.SMA/EMA/RSI/ATR/BBANDS/MACD`` on the instrument's resident float64 arrays
  (converted from the mantissas outside the timed code);
- nautilus: fresh NautilusTrader 1.221 indicator objects, each fed every bar with
  ``update_raw`` from a Python loop (plus an EMA(9) of the MACD line for the signal line,
  which nautilus lacks).

Times are PER INSTRUMENT for every rival, so the medians in the "warmup" group compare
directly: each round warms the rival's whole universe once (``pedantic`` with one iteration
per instrument, each iteration the next instrument), and its time is divided by the
universe's size. nautilus' per-bar loop is far slower than the others, so its universe is the
first max(1, INSTRUMENTS // 20) instruments (50 of the default 1,000); spine and talib warm
all INSTRUMENTS. Nothing per-rival is shared between rounds: every warm-up is cold.

Smoke mode (CI): SPINE_BENCH_INSTRUMENTS=5 and --benchmark-disable (the agreement check runs
in full; each benchmark warms one instrument once).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np
import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from benches.feature_rivals import (
    KEYS,
    Bars,
    Floats,
    as_floats,
    make_bars,
    nautilus_features,
    quantize,
    spine_last,
    spine_warm,
    talib_features,
    talib_last,
)
from benches.sizes import BARS, INSTRUMENTS

# nautilus' per-bar Python loop is far slower: it warms a twentieth of the universe, so a
# round stays short.
NAUTILUS_INSTRUMENTS = max(1, INSTRUMENTS // 20)
RIVAL_NAMES = ["spine", "talib", "nautilus"]
ROUNDS = {"spine": 10, "talib": 10, "nautilus": 5}
CHECKED = range(5)  # the instruments (seeds) whose last-bar values are checked


@cache
def _bars(instrument: int) -> Bars:
    return make_bars(BARS, seed=instrument)


@cache
def _floats(instrument: int) -> Floats:
    return as_floats(_bars(instrument))


def _resident(rival: str, instruments: int) -> list[Any]:
    """Each rival's resident universe: mantissa columns for Spine, float64 arrays otherwise."""
    return [(_bars if rival == "spine" else _floats)(i) for i in range(instruments)]


def _warm(rival: str) -> Callable[[Any], Any]:
    return {"spine": spine_warm, "talib": talib_features, "nautilus": nautilus_features}[rival]


@pytest.mark.parametrize("instrument", CHECKED)
def test_bars_are_well_formed(instrument: int) -> None:
    b = _bars(instrument)
    assert all(len(b[k]) == BARS and b[k].flags.c_contiguous for k in b)
    assert b["ts_event"].dtype == np.uint64 and np.all(np.diff(b["ts_event"].astype(np.int64)) == 60_000_000_000)
    assert np.all(b["high"] >= np.maximum(b["open"], b["close"]))
    assert np.all(b["low"] <= np.minimum(b["open"], b["close"]))
    assert np.all(b["low"] >= 1) and np.all(b["volume"] > 0)


@pytest.mark.parametrize("instrument", CHECKED)
def test_rivals_agree_on_the_last_bar(instrument: int) -> None:
    """Every rival's last-bar value, rounded half to even at the scale Spine declares for that
    output, is Spine's wire string exactly.

    TA-Lib seeds RSI/ATR's Wilder smoothing with the mean of the first ``period`` values, as
    Spine does; nautilus seeds it with the first value and EMA/MACD differ in seeding too, but
    after 5,000 bars the seeds' weight ((p - 1) / p)^k is far below the last decimal place.
    Float summation order differs (TA-Lib's and Spine's running sums), yet on these bars no
    output of either rival was even one unit in the last place off, so none is given a
    tolerance: a difference here is a real disagreement.
    """
    expected = spine_last(_bars(instrument))
    floats = _floats(instrument)
    for rival, got in (("talib", talib_last(floats)), ("nautilus", nautilus_features(floats))):
        for key in KEYS:
            value = expected[key]
            assert value["kind"] == "DECIMAL", (key, value)
            theirs = quantize(got[key], int(value["scale"]))
            assert theirs == value["value"], f"{rival} {key} at instrument {instrument}: {theirs} != {value}"


@pytest.mark.parametrize("rival", RIVAL_NAMES)
def test_cold_warmup(benchmark: BenchmarkFixture, rival: str) -> None:
    """Per instrument: one cold warm-up of the six indicators over 5,000 bars."""
    instruments = NAUTILUS_INSTRUMENTS if rival == "nautilus" else INSTRUMENTS
    resident = _resident(rival, instruments)
    warm = _warm(rival)
    universe = itertools.cycle(resident)  # each round of `instruments` iterations: each once

    def warm_next() -> None:
        warm(next(universe))

    benchmark.group = "warmup"
    benchmark.extra_info.update(instruments=instruments, bars=BARS, unit="seconds per instrument")
    benchmark.pedantic(warm_next, rounds=ROUNDS[rival], iterations=instruments)
