"""Folding several resolutions at once (each from the next finer one) must equal folding each
from the minutes: the calendar grid nests and so do the withholding rules."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import spine._core as core

MINUTE = 60_000_000_000
DAY_MINUTES = 1440
RESOLUTIONS = ["5m", "15m", "30m", "1h", "4h", "1d"]


@st.composite
def minute_series(draw: st.DrawFn) -> tuple[dict[str, np.ndarray], list[tuple[int, int]]]:
    """Bars over ~1-3 days with dropped minutes, plus coverage with an outage or two."""
    start_day = draw(st.integers(19_000, 19_100))
    offset = draw(st.integers(0, DAY_MINUTES - 1))
    length = draw(st.integers(1, 3 * DAY_MINUTES))
    minutes = np.arange(length) + start_day * DAY_MINUTES + offset + 1
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    keep = rng.random(length) > draw(st.sampled_from([0.0, 0.001, 0.05, 0.5]))
    minutes = minutes[keep]
    n = len(minutes)
    close = 10_000 + np.cumsum(rng.integers(-20, 21, n))
    open_ = close - rng.integers(-5, 6, n)
    bars = {
        "ts_event": (minutes * MINUTE).astype(np.uint64),
        "open": open_.astype(np.int64),
        "high": (np.maximum(open_, close) + rng.integers(0, 4, n)).astype(np.int64),
        "low": (np.minimum(open_, close) - rng.integers(0, 4, n)).astype(np.int64),
        "close": close.astype(np.int64),
        "volume": rng.integers(0, 1_000, n).astype(np.int64),
    }
    first = (start_day * DAY_MINUTES + offset) * MINUTE
    last = first + length * MINUTE
    cuts = sorted(draw(st.lists(st.integers(first, last), max_size=4)))
    edges = [first, *cuts, last]
    spans = [(a, b) for i, (a, b) in enumerate(zip(edges, edges[1:], strict=False)) if i % 2 == 0 and a < b]
    return bars, spans or [(first, last)]


def _fold_each(
    bars: dict[str, np.ndarray], spans: list[tuple[int, int]], channel: str
) -> list[tuple[dict[str, bytes], list[tuple[int, int, str]]]]:
    results = [core.fold_columns(*bars.values(), resolution=r, channel=channel, coverage=spans) for r in RESOLUTIONS]
    return [(r.columns(), r.withheld()) for r in results]


@given(minute_series(), st.sampled_from(["EXTERNAL", "INTERNAL"]))
def test_fold_many_equals_folding_each_from_minutes(
    case: tuple[dict[str, np.ndarray], list[tuple[int, int]]], channel: str
) -> None:
    bars, spans = case
    if len(bars["ts_event"]) == 0:
        return
    many = core.fold_columns_many(*bars.values(), resolutions=RESOLUTIONS, channel=channel, coverage=spans)
    assert [r.resolution for r in many] == RESOLUTIONS
    assert [(r.columns(), r.withheld()) for r in many] == _fold_each(bars, spans, channel)
