"""Property tests: a ``FeatureUniverse`` fed one series in pieces equals one fed it whole.

The same bars reach a universe through ``warm`` (a prefix), ``close_minute`` (the rest, in
order) and late repairs (bars held back, delivered among later ones, filling earlier gaps),
with minutes missing and spans observed ahead of the bars. Every row (every resolution, all
default features) must equal, bit for bit,

* a fresh universe warmed once from the final series with the same observations, and
* a ``FeatureState`` fed the inputs the plain-Python oracle (``reference.feature_inputs``)
  says the state took, restarted where it says.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from reference.feature_inputs import state_runs
from reference.folding import MINUTE_NS
from spine.features import FeatureState, FeatureUniverse

RESOLUTIONS = ("1m", "5m", "15m", "30m", "1h", "4h", "1d")
DAY = 1440 * MINUTE_NS
M = MINUTE_NS


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    """One instrument's final bars, what was observed, and the order they arrive in."""
    n = draw(st.integers(1, 400))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    # Minute 1 closes at base + M; the day's end falls inside the series when it can.
    base = 20_000 * DAY - draw(st.integers(0, n)) * M
    # Minutes missing one by one, and holes that empty whole buckets.
    missing = draw(st.sampled_from([0.0, 0.01, 0.05, 0.3]))
    holes = draw(st.lists(st.tuples(st.integers(1, n), st.integers(1, 90)), max_size=3))
    # Often a hole just before the newest few bars: buckets closed empty after a state's input.
    tail = draw(st.integers(1, 4))
    width = draw(st.integers(0, 70))
    holes.append((n - tail - width + 1, width))
    minutes = [
        k for k in range(1, n + 1) if rng.random() >= missing and not any(s <= k < s + length for s, length in holes)
    ] or [n]
    close = 100_000 + np.cumsum(rng.integers(-90, 91, len(minutes)))
    bars = {}
    for k, minute in enumerate(minutes):
        c = int(close[k])
        o = int(close[k - 1]) if k else c
        bars[base + minute * M] = (
            o,
            max(o, c) + int(rng.integers(0, 40)),
            min(o, c) - int(rng.integers(0, 40)),
            c,
            int(rng.integers(0, 5_000)),
        )
    # Spans observed ahead (INTERNAL: quiet minutes; past the newest bar: closed by warm).
    spans = draw(st.lists(st.tuples(st.integers(0, n + 30), st.integers(1, 120)), max_size=3))
    observed = [(base + s * M, base + (s + length) * M) for s, length in spans]
    # Arrival: held-back bars come late, among the later ones; the rest split at `cut`.
    ts = sorted(bars)
    late_rate = draw(st.sampled_from([0.0, 0.02, 0.1]))
    late = [t for t in ts if rng.random() < late_rate]
    on_time = [t for t in ts if t not in set(late)]
    cut = draw(st.integers(0, len(on_time)))
    live = on_time[cut:]
    for t in late:
        live.insert(int(rng.integers(0, len(live) + 1)), t)
    return {
        "channel": draw(st.sampled_from(["EXTERNAL", "INTERNAL"])),
        "bars": bars,
        "observed": observed,
        "warm": on_time[:cut],
        "live": live,
    }


def columns(bars: dict[int, tuple[int, ...]], ts: list[int]) -> list[np.ndarray]:
    cols = [np.array(ts, dtype=np.uint64)]
    cols += [np.array([bars[t][f] for t in ts], dtype=np.int64) for f in range(5)]
    return cols


def universe(s: dict[str, Any]) -> FeatureUniverse:
    u = FeatureUniverse()
    u.add(channel=s["channel"], price_precision=2, size_precision=0)
    for start, end in s["observed"]:
        u.observe(0, start, end)
    return u


def oracle_row(s: dict[str, Any], resolution: str) -> dict[str, Any]:
    spans = list(s["observed"]) + [(t - M, t) for t in s["bars"]]
    closed_through = max(end for _, end in spans)
    runs, restarted = state_runs(s["bars"], spans, s["channel"], resolution, closed_through)
    state = FeatureState(price_scale=2, size_scale=0)
    for k, run in enumerate(runs):
        if k:
            state.mark_gap()
        state.warm(*(np.array([bar[f] for bar in run], dtype=np.uint64 if f == 0 else np.int64) for f in range(6)))
    if restarted:
        state.mark_gap()
    return state.row()


def _example(channel: str, minutes: list[int], warm: int, observed: list[tuple[int, int]]) -> dict[str, Any]:
    """A scenario from minute numbers: the first `warm` bars warmed, the rest closed live."""
    base = 20_000 * DAY
    bars = {base + k * M: (100 + k, 102 + k, 99 + k, 101 + k, k) for k in minutes}
    ts = sorted(bars)
    return {
        "channel": channel,
        "bars": bars,
        "observed": [(base + s * M, base + e * M) for s, e in observed],
        "warm": ts[:warm],
        "live": ts[warm:],
    }


@given(scenarios())
# Issue 23, item 4: minute 10 observed, its candle closed live after warm.
@example(_example("EXTERNAL", list(range(1, 11)), 9, [(0, 10)]))
# Minute 11 closes 5m's (5, 10] empty after the state's newest input.
@example(_example("EXTERNAL", [1, 2, 3, 4, 5, 11], 5, []))
# Minute 15 closes 5m's (0, 5] and (10, 15] as bars, (5, 10] unobserved between them.
@example(_example("INTERNAL", [1, 2, 3, *range(15, 200)], 3, [(3, 5), (10, 14)]))
def test_pieces_equal_the_whole(s: dict[str, Any]) -> None:
    bars = s["bars"]
    pieces = universe(s)
    pieces.warm(0, *columns(bars, s["warm"]))
    for t in s["live"]:
        one = [np.array([v], dtype=np.int64) for v in bars[t]]
        pieces.close_minute(np.array([0], dtype=np.uint32), np.array([t], dtype=np.uint64), *one)
    whole = universe(s)
    whole.warm(0, *columns(bars, sorted(bars)))
    for resolution in RESOLUTIONS:
        row = pieces.row(0, resolution)
        assert row == whole.row(0, resolution), resolution
        assert row == oracle_row(s, resolution), resolution
