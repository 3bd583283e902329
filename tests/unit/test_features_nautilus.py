"""Feature kernels against the NautilusTrader 1.221 indicators of the same name.

Parameterisation differences, each matched or bounded here:

* RSI: nautilus is 0..1 (scaled by 100 here) and, like ATR, seeds its Wilder average with the
  first value where ours (TA-Lib) seeds with the mean of the first `period`; the seeds' effect
  decays as ((period - 1) / period)^k, so values agree at the declared scale after a few
  hundred bars and are compared on the tail.
* ROC: nautilus `RateOfChange(p)` compares with the close p - 1 bars back, as a fraction:
  ours(period) = 100 * nautilus(period + 1).
* Bollinger: nautilus bands the typical price (h + l + c) / 3; fed (c, c, c) it bands closes.
* MACD: nautilus has no signal line; its value is our `line`.
* VWAP: nautilus is cumulative per UTC day; on one day's first `period` bars it equals ours.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import numpy as np
import pytest
from nautilus_trader.indicators import (
    AverageTrueRange,
    BollingerBands,
    DonchianChannel,
    ExponentialMovingAverage,
    MovingAverageConvergenceDivergence,
    MovingAverageType,
    RateOfChange,
    RelativeStrengthIndex,
    SimpleMovingAverage,
    VolumeWeightedAveragePrice,
)
from test_features import MINUTE, as_floats, make_bars, rows_by_bar

from reference.indicators import quantize


def agree(rows: list[dict[str, dict[str, Any]]], key: str, theirs: list[float | None], scale: int, start: int) -> None:
    compared = near = 0
    for i in range(start, len(rows)):
        value = theirs[i]
        if value is None:
            continue
        got = rows[i][key]
        assert got["kind"] == "DECIMAL", (key, i, got)
        units = abs(Decimal(got["value"]) - Decimal(quantize(value, scale))).scaleb(scale)
        assert units <= 1, (key, i, got["value"], value)
        compared += 1
        near += units == 1
    assert compared >= 50
    assert near <= max(2, compared // 100), (key, near, compared)


@pytest.fixture(scope="module")
def series() -> tuple[dict[str, Any], dict[str, Any], list[dict[str, dict[str, Any]]]]:
    cols = make_bars(21, 700)
    cols["volume"] = cols["volume"] + 1
    return cols, as_floats(cols), rows_by_bar(cols)


def feed(indicator: Any, values: list[tuple[float, ...]], read: Any) -> list[float | None]:
    out: list[float | None] = []
    for args in values:
        indicator.update_raw(*args)
        out.append(read(indicator) if indicator.initialized else None)
    return out


def test_sma_ema_match_exactly_from_warm(series: Any) -> None:
    _, f, rows = series
    closes = [(float(c),) for c in f["close"]]
    agree(rows, "sma_20.value", feed(SimpleMovingAverage(20), closes, lambda i: i.value), 8, 0)
    agree(rows, "ema_20.value", feed(ExponentialMovingAverage(20), closes, lambda i: i.value), 8, 0)


def test_rsi_and_atr_converge_to_nautilus_wilder(series: Any) -> None:
    _, f, rows = series
    closes = [(float(c),) for c in f["close"]]
    rsi = feed(RelativeStrengthIndex(14, MovingAverageType.WILDER), closes, lambda i: 100.0 * i.value)
    agree(rows, "rsi_14.value", rsi, 4, 400)
    hlc = [(float(h), float(lo), float(c)) for h, lo, c in zip(f["high"], f["low"], f["close"], strict=True)]
    atr = feed(AverageTrueRange(14, MovingAverageType.WILDER), hlc, lambda i: i.value)
    agree(rows, "atr_14.value", atr, 8, 400)


def test_bollinger_on_closes(series: Any) -> None:
    _, f, rows = series
    ccc = [(float(c),) * 3 for c in f["close"]]
    for key, read in (("mid", lambda i: i.middle), ("upper", lambda i: i.upper), ("lower", lambda i: i.lower)):
        agree(rows, f"bb_20_2.{key}", feed(BollingerBands(20, 2.0), ccc, read), 8, 0)


def test_macd_line_and_roc(series: Any) -> None:
    _, f, rows = series
    closes = [(float(c),) for c in f["close"]]
    macd = feed(MovingAverageConvergenceDivergence(12, 26, MovingAverageType.EXPONENTIAL), closes, lambda i: i.value)
    agree(rows, "macd_12_26_9.line", macd, 8, 33)
    roc = feed(RateOfChange(11), closes, lambda i: 100.0 * i.value)
    agree(rows, "roc_10.value", roc, 4, 0)


def test_donchian(series: Any) -> None:
    _, f, rows = series
    hl = [(float(h), float(lo)) for h, lo in zip(f["high"], f["low"], strict=True)]
    agree(rows, "donchian_20.high", feed(DonchianChannel(20), hl, lambda i: i.upper), 8, 0)
    agree(rows, "donchian_20.low", feed(DonchianChannel(20), hl, lambda i: i.lower), 8, 0)


def test_vwap_equals_the_session_vwap_over_one_days_first_window() -> None:
    for seed in range(60):
        cols = make_bars(seed, 20)
        day = np.uint64(19_700 * 86_400 * 10**9)
        cols["ts_event"] = day + np.arange(1, 21, dtype=np.uint64) * np.uint64(MINUTE)
        cols["volume"] = cols["volume"] + 1
        f = as_floats(cols)
        vwap = VolumeWeightedAveragePrice()
        for i in range(20):
            typical = (f["high"][i] + f["low"][i] + f["close"][i]) / 3.0
            when = datetime.fromtimestamp(int(cols["ts_event"][i]) / 1e9, tz=UTC)
            vwap.update_raw(float(typical), float(f["volume"][i]), when)
        got = rows_by_bar(cols, ["vwap_20"])[-1]["vwap_20.value"]
        units = abs(Decimal(got["value"]) - Decimal(quantize(vwap.value, 8))).scaleb(8)
        assert units <= 1, (seed, got, vwap.value)
