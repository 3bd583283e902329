"""Property tests: folding 1-minute bars and the durable series, against independent oracles.

The oracles live in ``tests/reference/folding.py`` and never import spine: pandas ``resample``
and polars ``group_by_dynamic`` compute the aggregates, plain Python decides which buckets are
served and which are withheld (and why), and a plain-Python model applies the series' arrival
rule.

Hypothesis draws the shape of each case (where it starts relative to a day or 4-hour boundary,
its length, how many minutes are quiet or missing, the coverage pattern, the price range);
the bars themselves come from a numpy generator seeded by a drawn integer, so that series
longer than 5,000 bars stay cheap to generate.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

import spine
from reference import folding as ref

M = ref.MINUTE_NS
DAY = 1440 * M
H4 = 240 * M
RESOLUTIONS = list(ref.STEP_MINUTES)
CHANNELS = ("EXTERNAL", "INTERNAL")
PRICE_SCALE, SIZE_SCALE = 4, 3

# Generators.


def _ohlcv(rng: np.random.Generator, n: int, large: bool) -> tuple[np.ndarray, ...]:
    """n consistent bars: low <= open, close <= high; volume >= 0 (sums stay inside int64)."""
    if large:  # mantissas near the top of int64 (exactness: no float path survives this)
        base = rng.integers(2**61, 2**62, n, dtype=np.int64)
        spread = rng.integers(0, 2**40, n, dtype=np.int64)
    else:
        base = rng.integers(1, 10**7, n, dtype=np.int64)
        spread = rng.integers(0, 1000, n, dtype=np.int64)
    low = base
    high = base + spread
    open_ = low + (rng.random(n) * (spread + 1)).astype(np.int64).clip(0, spread)
    close = low + (rng.random(n) * (spread + 1)).astype(np.int64).clip(0, spread)
    vmax = 10**15 if large else 10**6
    volume = rng.integers(0, vmax, n, dtype=np.int64)
    volume[rng.random(n) < 0.05] = 0
    return open_, high, low, close, volume


@dataclass
class Case:
    ts: np.ndarray  # int64 close times, strictly increasing
    open: np.ndarray
    high: np.ndarray
    low: np.ndarray
    close: np.ndarray
    volume: np.ndarray
    coverage: list[tuple[int, int]] | None  # None: the offline default
    describe: str

    def columns(self) -> tuple[np.ndarray, ...]:
        return self.open, self.high, self.low, self.close, self.volume


ANCHORS = st.sampled_from(["day", "4h", "any"])
LENGTHS = st.one_of(st.integers(0, 60), st.integers(1, 600), st.integers(1400, 3200), st.integers(5001, 7200))
MISSING = st.sampled_from([0.0, 0.0, 0.002, 0.05, 0.5, 0.97])
COVERAGE_MODES = st.sampled_from(["default", "exact", "holes", "extended", "short", "ragged", "empty"])


@st.composite
def timelines(draw: st.DrawFn, lengths: st.SearchStrategy[int] = LENGTHS) -> tuple[int, int]:
    """(first minute start, number of minutes), starting just before a day or 4h boundary."""
    anchor = draw(ANCHORS)
    day = draw(st.integers(1, 30_000))
    if anchor == "day":
        boundary = day * DAY
    elif anchor == "4h":
        boundary = day * DAY + draw(st.integers(0, 5)) * H4
    else:
        boundary = day * DAY + draw(st.integers(0, 1439)) * M
    lead = draw(st.integers(0, 300))
    return boundary - lead * M, draw(lengths)


def _holes(rng: np.random.Generator, t0: int, t1: int, k: int) -> list[tuple[int, int]]:
    """[t0, t1) with k random holes cut out (whole minutes)."""
    n = (t1 - t0) // M
    if n < 2:
        return [(t0, t1)] if n else []
    cuts = sorted(set(rng.integers(0, n, 2 * k).tolist()))
    spans, cursor = [], 0
    for a, b in zip(cuts[0::2], cuts[1::2], strict=False):
        if a > cursor:
            spans.append((t0 + cursor * M, t0 + a * M))
        cursor = max(cursor, b)
    if cursor < n:
        spans.append((t0 + cursor * M, t1))
    return spans


@st.composite
def fold_cases(draw: st.DrawFn) -> Case:
    start, n = draw(timelines())
    if draw(st.integers(0, 3)) == 0:  # clean: complete, fully observed (1d EXTERNAL bars)
        missing, mode = 0.0, draw(st.sampled_from(["default", "exact", "extended"]))
    else:
        missing, mode = draw(MISSING), draw(COVERAGE_MODES)
    large = draw(st.booleans())
    holes_have_bars = draw(st.booleans())
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    t0, t1 = start, start + n * M
    minutes = np.arange(n, dtype=np.int64)
    present = rng.random(n) >= missing
    coverage: list[tuple[int, int]] | None
    if mode == "default":
        coverage = None
    elif mode == "exact":
        coverage = [(t0, t1)] if n else [(t0, t0 + M)]
    elif mode == "holes":
        coverage = _holes(rng, t0, t1, int(rng.integers(1, 5))) or [(t0, t0 + M)]
    elif mode == "extended":
        before, after = (int(x) for x in rng.integers(0, 600, 2))
        coverage = [(t0 - before * M, t1 + after * M + M)]
    elif mode == "short":
        coverage = [(t0, t0 + int(rng.integers(1, max(2, n))) * M)]
    elif mode == "ragged":
        spans = _holes(rng, t0, t1 + 30 * M, int(rng.integers(1, 4))) or [(t0, t0 + M)]
        ragged = []
        for s, e in spans:  # unaligned ends (rounded inward), overlapping copies, shuffled
            ragged.append((s - int(rng.integers(0, M // 2)), e + int(rng.integers(0, M // 2))))
            if rng.random() < 0.5:
                mid = s + (e - s) // 2 + 1
                ragged.append((s + int(rng.integers(1, M)), max(mid, s + M + 1)))
        rng.shuffle(ragged)
        coverage = [(int(s), int(e)) for s, e in ragged]
    else:
        coverage = []
    if coverage is not None and not holes_have_bars:
        # An outage has no bars: keep only bars whose minute is observed.
        spans = ref.normalise_coverage(coverage)
        opens = t0 + minutes * M
        observed = np.zeros(n, dtype=bool)
        for s, e in spans:
            observed |= (opens >= s) & (opens + M <= e)
        present &= observed
    ts = t0 + (minutes[present] + 1) * M
    open_, high, low, close, volume = _ohlcv(rng, len(ts), large)
    describe = f"start={start} n={n} missing={missing} mode={mode} seed={seed} bars={len(ts)}"
    return Case(ts, open_, high, low, close, volume, coverage, describe)


# Decoding spine's outputs.

FIELDS = ("open", "high", "low", "close", "volume")


def decode(result: Any, with_sequence: bool = False) -> tuple[dict[int, tuple[int, ...]], list]:
    cols = result.columns()
    ends = np.frombuffer(cols["ts_event"], dtype="<u8").tolist()
    values = [np.frombuffer(cols[name], dtype="<i8").tolist() for name in FIELDS]
    if with_sequence:
        values.append(np.frombuffer(cols["sequence"], dtype="<u8").tolist())
    bars = {int(end): tuple(int(col[i]) for col in values) for i, end in enumerate(ends)}
    assert len(bars) == len(ends), "duplicate bucket ends"
    assert ends == sorted(ends), "bars out of order"
    return bars, [tuple(w) for w in result.withheld()]


def _mantissa(value: Decimal, scale: int) -> int:
    scaled = value.scaleb(scale)
    assert scaled == scaled.to_integral_value(), (value, scale)
    return int(scaled)


def decode_table(table: pa.Table) -> dict[str, tuple[dict[int, tuple[int, ...]], list]]:
    """Per resolution: {end: (o, h, l, c, v)} of bar rows and [(start, end, reason)]."""
    assert table.column_names == [
        "resolution", "start", "ts_event", *FIELDS, "withheld"
    ]  # fmt: skip
    assert table.schema.field("ts_event").type == pa.timestamp("ns", tz="UTC")
    for name in FIELDS:
        scale = SIZE_SCALE if name == "volume" else PRICE_SCALE
        assert table.schema.field(name).type == pa.decimal128(38, scale)
    rows = table.to_pydict()
    out: dict[str, tuple[dict[int, tuple[int, ...]], list]] = {}
    starts = table.column("start").cast(pa.int64()).to_pylist()
    ends = table.column("ts_event").cast(pa.int64()).to_pylist()
    for i, resolution in enumerate(rows["resolution"]):
        bars, withheld = out.setdefault(resolution, ({}, []))
        reason = rows["withheld"][i]
        if reason is None:
            assert ends[i] - starts[i] == ref.step_ns(resolution)
            bars[ends[i]] = tuple(
                _mantissa(rows[name][i], SIZE_SCALE if name == "volume" else PRICE_SCALE) for name in FIELDS
            )
        else:
            assert all(rows[name][i] is None for name in FIELDS)
            withheld.append((starts[i], ends[i], reason))
    for _, withheld in out.values():
        withheld.sort()
    return out


def expected(case: Case, resolution: str, channel: str) -> tuple[dict, list]:
    """What the references say the fold serves and withholds."""
    coverage = ref.default_coverage(case.ts) if case.coverage is None else case.coverage
    verdict = ref.withholding(case.ts, coverage, channel, resolution)
    aggregates = ref.pandas_fold(case.ts, case.columns(), resolution)
    return {end: aggregates[end] for end in verdict.served}, verdict.withheld


# The offline fold.


@given(
    case=fold_cases(),
    wanted=st.one_of(
        st.just(RESOLUTIONS),
        st.permutations(RESOLUTIONS),
        st.lists(st.sampled_from(RESOLUTIONS), min_size=1, max_size=4, unique=True),
    ),
)
def test_offline_fold_matches_pandas_polars_and_the_withholding_rules(case: Case, wanted: list[str]) -> None:
    """fold_bars to every derived resolution (or a subset, in any order: several at once are
    folded each from the next finer one requested) on both channels."""
    aggregates = {}
    for resolution in wanted:
        by_pandas = ref.pandas_fold(case.ts, case.columns(), resolution)
        by_polars = ref.polars_fold(case.ts, case.columns(), resolution)
        assert by_pandas == by_polars, f"the references disagree at {resolution}"
        aggregates[resolution] = by_pandas
    coverage = ref.default_coverage(case.ts) if case.coverage is None else case.coverage
    for channel in CHANNELS:
        table = spine.fold_bars(
            {"ts_event": case.ts, **dict(zip(FIELDS, case.columns(), strict=True))},
            wanted,
            channel=channel,
            coverage=case.coverage,
            price_precision=PRICE_SCALE,
            size_precision=SIZE_SCALE,
        )
        folded = decode_table(table)
        order = list(dict.fromkeys(table.column("resolution").to_pylist()))
        assert order == [r for r in wanted if r in folded], "not in the order asked"
        for resolution in wanted:
            verdict = ref.withholding(case.ts, coverage, channel, resolution)
            bars, withheld = folded.get(resolution, ({}, []))
            where = f"{channel} {resolution} ({case.describe})"
            assert withheld == verdict.withheld, f"withheld spans differ: {where}"
            assert sorted(bars) == verdict.served, f"served buckets differ: {where}"
            assert bars == {e: aggregates[resolution][e] for e in verdict.served}, where


@given(
    case=fold_cases(),
    resolution=st.sampled_from(RESOLUTIONS),
    channel=st.sampled_from(CHANNELS),
)
def test_fold_columns_one_resolution_and_constituent_sequences(case: Case, resolution: str, channel: str) -> None:
    """The low-level single-resolution fold, with a sequence column: a derived bar carries the
    highest constituent sequence (sequences given out of time order, as repairs make them)."""
    rng = np.random.default_rng(len(case.ts))
    sequence = rng.permutation(len(case.ts)).astype(np.uint64) + 1
    result = spine._core.fold_columns(
        case.ts.astype(np.uint64), *case.columns(),
        resolution=resolution, channel=channel, coverage=case.coverage, sequence=sequence,
    )  # fmt: skip
    bars, withheld = decode(result, with_sequence=True)
    coverage = ref.default_coverage(case.ts) if case.coverage is None else case.coverage
    verdict = ref.withholding(case.ts, coverage, channel, resolution)
    aggregates = ref.polars_fold(case.ts, case.columns(), resolution, sequence=sequence)
    assert withheld == verdict.withheld, case.describe
    assert bars == {end: aggregates[end] for end in verdict.served}, case.describe
    assert len(result) == len(verdict.served)
    assert result.resolution == resolution


# The incremental fold.


@st.composite
def streams(draw: st.DrawFn) -> tuple[int, np.ndarray, np.ndarray, float, int]:
    """An in-order minute stream: (first minute start, observed mask, bar mask, advance
    probability, seed)."""
    start, n = draw(timelines(st.one_of(st.integers(1, 400), st.integers(1400, 3000))))
    seed = draw(st.integers(0, 2**32 - 1))
    missing = draw(MISSING)
    outages = draw(st.integers(0, 4))
    advance = draw(st.sampled_from([0.0, 0.3, 1.0]))
    rng = np.random.default_rng(seed)
    observed = np.ones(n, dtype=bool)
    for _ in range(outages):
        a = int(rng.integers(0, n))
        observed[a : a + int(rng.integers(1, 200))] = False
    bars = observed & (rng.random(n) >= missing)
    return start, observed, bars, advance, seed


@given(stream=streams(), channel=st.sampled_from(CHANNELS))
def test_incremental_fold_emits_exactly_the_bars_of_the_whole_fold(
    stream: tuple[int, np.ndarray, np.ndarray, float, int], channel: str
) -> None:
    start, observed, has_bar, advance, seed = stream
    rng = np.random.default_rng(seed)
    n = len(observed)
    values = _ohlcv(rng, n, large=bool(seed % 2))
    series = spine.Series(channel=channel, price_precision=PRICE_SCALE, size_precision=SIZE_SCALE, capacity=10_000)
    emitted: dict[str, dict[int, tuple[int, ...]]] = {r: {} for r in RESOLUTIONS}
    withheld_events: list[tuple[str, str, int, int]] = []

    def collect(closed: list) -> None:
        for resolution, kind, b_start, b_end, bar in closed:
            assert b_end - b_start == ref.step_ns(resolution)
            if kind == "bar":
                assert b_end not in emitted[resolution], f"{resolution} bucket {b_end} twice"
                emitted[resolution][b_end] = tuple(bar)
            else:
                assert bar is None
                withheld_events.append((resolution, kind, b_start, b_end))

    watermark = 0
    for i in range(n):
        m = start + i * M
        if not observed[i]:
            continue
        series.observe(m, m + M)
        watermark = m + M
        if has_bar[i]:
            outcome, closed = series.push(m + M, *(int(col[i]) for col in values))
            assert outcome == "APPENDED"
            collect(closed)
        if rng.random() < advance:
            collect(series.advance(watermark))
    if watermark:
        collect(series.advance(watermark))
    assert series.counters()["accepted"] == int(has_bar.sum())

    cols = series.columns()
    ts = np.frombuffer(cols["ts_event"], dtype="<u8").astype(np.int64)
    columns = [np.frombuffer(cols[name], dtype="<i8") for name in FIELDS]
    sequence = np.frombuffer(cols["sequence"], dtype="<u8").astype(np.int64)
    coverage = series.coverage()
    observed_minutes = [start + i * M for i in range(n) if observed[i]]
    assert coverage == ref.merge_minutes(observed_minutes)
    for resolution in RESOLUTIONS:
        whole, whole_withheld = decode(series.fold(resolution), with_sequence=True)
        assert emitted[resolution] == whole, f"{channel} {resolution}: stream != page"
        verdict = ref.withholding(ts, coverage, channel, resolution)
        aggregates = ref.pandas_fold(ts, columns, resolution, sequence=sequence)
        assert whole == {e: aggregates[e] for e in verdict.served}
        assert whole_withheld == verdict.withheld
    for resolution, reason, b_start, b_end in withheld_events:
        verdict = ref.withholding(ts, coverage, channel, resolution)
        assert verdict.buckets.get(b_end) == reason, (resolution, reason, b_start, b_end)


# The arrival rule: duplicates, out-of-order arrivals, eviction.


@st.composite
def arrivals(draw: st.DrawFn, long: bool = False) -> tuple[list, list]:
    """A stream of pushes and observations: mostly in order, with duplicates right after the
    original (the framework delivers both), late duplicates, and delayed (out-of-order) bars.

    Returns (events, distinct minutes) where an event is ("push", ts, values) or
    ("observe", start, end).
    """
    lengths = st.integers(5001, 6500) if long else st.integers(1, 600)
    start, n = draw(timelines(lengths))
    seed = draw(st.integers(0, 2**32 - 1))
    p_dup = draw(st.sampled_from([0.0, 0.05, 0.3]))
    p_late_dup = draw(st.sampled_from([0.0, 0.02, 0.1]))
    p_delay = draw(st.sampled_from([0.0, 0.02, 0.1]))
    missing = draw(st.sampled_from([0.0, 0.1, 0.5]))
    rng = np.random.default_rng(seed)
    present = np.flatnonzero(rng.random(n) >= missing)
    ts_all = start + (present.astype(np.int64) + 1) * M
    o, h, l_, c, v = _ohlcv(rng, 3 * len(ts_all) + 3, large=False)
    k = 0

    def version() -> tuple[int, int, int, int, int]:
        nonlocal k
        k += 1
        return int(o[k]), int(h[k]), int(l_[k]), int(c[k]), int(v[k])

    events: list[tuple] = []
    sent: list[int] = []
    delayed: list[int] = []
    for t in ts_all.tolist():
        if rng.random() < 0.3:
            events.append(("observe", t - M, t))
        if rng.random() < p_delay:
            delayed.append(t)
        else:
            events.append(("push", t, version()))
            sent.append(t)
            if rng.random() < p_dup:
                events.append(("push", t, version()))
        if sent and rng.random() < p_late_dup:
            events.append(("push", sent[int(rng.integers(0, len(sent)))], version()))
        if delayed and rng.random() < 0.1:
            late = delayed.pop(int(rng.integers(0, len(delayed))))
            events.append(("push", late, version()))
            sent.append(late)
    for late in delayed:
        events.append(("push", late, version()))
    return events, ts_all.tolist()


def _replay(series: Any, model: ref.SeriesModel, events: list) -> None:
    for event in events:
        if event[0] == "observe":
            series.observe(event[1], event[2])
            model.observe(event[1], event[2])
        else:
            _, ts, values = event
            outcome, _closed = series.push(ts, *values)
            assert outcome == model.push(ts, values), f"push {ts}"


def _series_state(series: Any) -> dict[str, list[int]]:
    cols = series.columns()
    out = {"ts_event": np.frombuffer(cols["ts_event"], dtype="<u8").tolist()}
    for name in FIELDS:
        out[name] = np.frombuffer(cols[name], dtype="<i8").tolist()
    out["sequence"] = np.frombuffer(cols["sequence"], dtype="<u8").tolist()
    return out


@given(stream=arrivals(), channel=st.sampled_from(CHANNELS))
def test_duplicates_are_dropped_first_wins_and_counted(stream: tuple, channel: str) -> None:
    events, _distinct = stream
    series = spine.Series(channel=channel, price_precision=2, size_precision=0)
    model = ref.SeriesModel(capacity=10**9)
    _replay(series, model, events)
    state = _series_state(series)
    assert state == model.columns()
    # First wins: each held bar carries the values of the first push of its minute.
    first: dict[int, tuple] = {}
    for event in events:
        if event[0] == "push":
            first.setdefault(event[1], event[2])
    held = {t: tuple(state[name][i] for name in FIELDS) for i, t in enumerate(state["ts_event"])}
    assert held == first
    pushes = sum(1 for e in events if e[0] == "push")
    counters = series.counters()
    assert counters == model.counters
    assert counters["duplicates"] == pushes - len(first)
    assert counters["accepted"] == len(first) == series.last_sequence == len(series)
    # Sequences: one per accepted bar, strictly increasing in arrival order.
    assert sorted(state["sequence"]) == list(range(1, len(first) + 1))
    assert series.coverage() == model.coverage()


@given(
    stream=st.one_of(arrivals(), arrivals(long=True)),
    capacity=st.one_of(st.integers(1, 50), st.integers(51, 700), st.just(5000)),
    channel=st.sampled_from(CHANNELS),
)
@settings(max_examples=max(10, settings().max_examples // 2))
def test_eviction_keeps_the_newest_bars_and_the_fold_matches_the_offline_fold(
    stream: tuple, capacity: int, channel: str
) -> None:
    events, _distinct = stream
    series = spine.Series(channel=channel, price_precision=2, size_precision=0, capacity=capacity)
    model = ref.SeriesModel(capacity=capacity)
    _replay(series, model, events)
    state = _series_state(series)
    assert state == model.columns()
    assert len(series) == min(capacity, model.counters["accepted"])
    # The newest `capacity` distinct minutes pushed (one dropped as too old never is one).
    pushed_minutes = sorted({e[1] for e in events if e[0] == "push"})
    assert state["ts_event"] == pushed_minutes[-capacity:]
    assert series.counters() == model.counters
    assert model.counters["evicted"] == model.counters["accepted"] - len(series)
    coverage = series.coverage()
    assert coverage == model.coverage()
    # Coverage before the last evicted bar's close is forgotten.
    assert all(start >= model.last_evicted for start, _ in coverage)

    ts = np.asarray(state["ts_event"], dtype=np.uint64)
    columns = [np.asarray(state[name], dtype=np.int64) for name in FIELDS]
    sequence = np.asarray(state["sequence"], dtype=np.uint64)
    for resolution in RESOLUTIONS:
        whole = decode(series.fold(resolution), with_sequence=True)
        offline = spine._core.fold_columns(
            ts, *columns, resolution=resolution, channel=channel,
            coverage=coverage, sequence=sequence,
        )  # fmt: skip
        assert whole == decode(offline, with_sequence=True), resolution
        verdict = ref.withholding(ts.tolist(), coverage, channel, resolution)
        aggregates = ref.pandas_fold(ts, columns, resolution, sequence=sequence)
        assert whole == ({e: aggregates[e] for e in verdict.served}, verdict.withheld)
    many = series.fold_many(RESOLUTIONS[::-1])
    assert [r.resolution for r in many] == RESOLUTIONS[::-1]
    for result in many:
        assert decode(result, True) == decode(series.fold(result.resolution), True)

    hint = series.resume_hint()
    if not len(ts):
        assert hint == {"newest_ts_event": None, "newest_sequence": None, "resume_from": None}
    else:
        newest = int(ts[-1])
        assert hint["newest_ts_event"] == newest
        assert hint["newest_sequence"] == int(sequence[-1])
        span = [e for s, e in coverage if s <= newest <= e]
        assert hint["resume_from"] == (span[0] if span else newest)


@given(case=fold_cases(), channel=st.sampled_from(CHANNELS))
@settings(max_examples=max(10, settings().max_examples // 2))
def test_bulk_extend_equals_pushing_one_by_one(case: Case, channel: str) -> None:
    capacity = 5000
    bulk = spine.Series(channel=channel, price_precision=0, size_precision=0, capacity=capacity)
    accepted = bulk.extend(case.ts.astype(np.uint64), *case.columns())
    assert accepted == len(case.ts)
    model = ref.SeriesModel(capacity=capacity)
    for i, t in enumerate(case.ts.tolist()):
        model.push(t, tuple(int(col[i]) for col in case.columns()))
    assert _series_state(bulk) == model.columns()
    assert bulk.counters() == model.counters
    assert bulk.coverage() == model.coverage()


def test_reference_oracles_agree_on_a_fixed_long_series() -> None:
    """A smoke check of the two aggregate references on 7,000 bars across day boundaries."""
    rng = np.random.default_rng(7)
    ts = 20_000 * DAY - 90 * M + np.sort(rng.choice(7200, 7000, replace=False) + 1) * M
    cols = _ohlcv(rng, len(ts), large=True)
    for resolution in RESOLUTIONS:
        assert ref.pandas_fold(ts, cols, resolution) == ref.polars_fold(ts, cols, resolution)
