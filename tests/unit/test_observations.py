"""``ObservationWriter`` against the plain-Python oracle (tests/reference/observations.py) over
random trending bar walks, every document schema-valid; priming; its refusals; and the
screener's bounded ``Observations`` store."""

from __future__ import annotations

import bisect
import json
from decimal import Decimal
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from refusals import raises

from reference.observations import document, patterns
from reference.wire_validator import validate
from spine.features import FeatureUniverse, ObservationWriter
from spine.screener.observations import DEFAULT_CAPACITY, Observations

M = 60 * 10**9
T0 = 20_000 * 1440 * M
RESOLUTIONS = ("1m", "5m", "15m", "30m", "1h", "4h", "1d")


def setup(n: int) -> tuple[FeatureUniverse, ObservationWriter]:
    u, w = FeatureUniverse(), ObservationWriter()
    for i in range(n):
        u.add(channel="EXTERNAL", price_precision=2, size_precision=0)
        w.register(i, f"I{i}.SIM")
    return u, w


def walk(legs: list[tuple[int, int]]) -> list[int]:
    """Closes in cents: legs of (bars, cents per bar), a small wobble on each."""
    price, out = 10_000, []
    for bars, step in legs:
        for k in range(bars):
            price = max(price + step + k % 3 - 1, 100)
            out.append(price)
    return out


def minute(instruments: list[int], m: int, closes: list[list[int]]) -> list[np.ndarray]:
    c = np.array([closes[i][m] for i in instruments], dtype=np.int64)
    o = np.array([closes[i][m - 1] if m else closes[i][0] for i in instruments], dtype=np.int64)
    return [
        np.array(instruments, dtype=np.uint32),
        np.full(len(instruments), T0 + (m + 1) * M, dtype=np.uint64),
        o,
        np.maximum(o, c) + 7,
        np.minimum(o, c) - 7,
        c,
        1_000 + c % 50,
    ]


def run(walks: list[list[int]], skip: frozenset[int] = frozenset()) -> list[bytes]:
    """Feed the walks minute by minute (minutes in ``skip`` missing: gaps); after every close
    the writer's documents must be the oracle's, from the rows before and after it."""
    n = len(walks)
    u, w = setup(n)
    fed: list[tuple[list[int], list[int]]] = [([], []) for _ in range(n)]  # per instrument: ts, close
    held: dict[tuple[int, str], tuple[int, dict[str, Any]]] = {}
    everything = []
    for m in range(min(map(len, walks))):
        if m in skip:
            continue
        changed = u.close_minute(*minute(list(range(n)), m, walks))
        for i in range(n):
            fed[i][0].append(T0 + (m + 1) * M)
            fed[i][1].append(walks[i][m])
        docs = w.observe(u, changed)
        order = [tuple(p) for p in np.frombuffer(changed, dtype="<u4").reshape(-1, 2).tolist()]
        expected = []
        for i in range(n):
            for r, res in enumerate(RESOLUTIONS):
                ts = u.last_ts_event(i, res)
                if ts is None:
                    continue
                row, before = u.row(i, res), held.get((i, res))
                held[(i, res)] = (ts, row)
                if before is None or ts <= before[0]:
                    continue
                assert (i, r) in order, "a row whose bar moved is reported changed"
                times, closes = fed[i]
                k = bisect.bisect_right(times, ts) - 1
                close = Decimal(closes[k]) / 100 if k >= 0 and times[k] > ts - _step(res) else None
                for pattern, values in patterns(before[1], row, close):
                    expected.append((order.index((i, r)), document(f"I{i}.SIM", res, ts, pattern, values)))
        expected.sort(key=lambda e: e[0])  # stable: pattern order within a row
        assert [json.loads(d) for d in docs] == [e[1] for e in expected], f"minute {m}"
        everything.extend(docs)
    for raw in everything:
        validate(json.loads(raw))
    return everything


def _step(resolution: str) -> int:
    return int(resolution[:-1]) * {"m": M, "h": 60 * M, "d": 1440 * M}[resolution[-1]]


def test_a_zig_zag_makes_every_pattern() -> None:
    legs = [(60, 9), (40, -14), (50, 12), (30, -3), (45, -11), (60, 15), (40, -20)]
    docs = run([walk(legs), walk(legs[1:] + legs[:1])])
    seen = {json.loads(d)["pattern"] for d in docs}
    assert len(seen) == 12


def test_documents_are_canonical() -> None:
    from spine._core import canonical_json

    docs = run([walk([(60, 9), (40, -14), (50, 12)])])
    assert docs and all(canonical_json(json.loads(d)) == d for d in docs)


legs_strategy = st.lists(st.tuples(st.integers(5, 40), st.integers(-25, 25)), min_size=3, max_size=8)


def test_the_writer_is_the_oracle_over_random_walks() -> None:
    counts: list[int] = []

    @given(walks=st.lists(legs_strategy, min_size=1, max_size=2), skip=st.frozensets(st.integers(0, 300), max_size=3))
    def check(walks: list[list[tuple[int, int]]], skip: frozenset[int]) -> None:
        counts.append(len(run([walk(legs) for legs in walks], skip)))

    check()
    assert sum(counts) > 0, "the walks made no observation at all"


def test_prime_after_a_warm_sees_no_history() -> None:
    closes = walk([(200, 9), (200, -9)])
    u, w = setup(1)
    ts = np.array([T0 + (m + 1) * M for m in range(len(closes))], dtype=np.uint64)
    c = np.array(closes, dtype=np.int64)
    u.warm(0, ts, c - 3, c + 7, c - 10, c, 1_000 + c % 50)
    w.prime(u)
    w.prime(u, 0)
    assert w.observe(u, np.array([[0, r] for r in range(7)], dtype="<u4").tobytes()) == []
    bar = [
        np.array([v], dtype=t)
        for v, t in (
            (0, np.uint32),
            (T0 + (len(closes) + 1) * M, np.uint64),
            (9_000, np.int64),
            (20_010, np.int64),
            (8_990, np.int64),
            (20_000, np.int64),
            (1_000, np.int64),
        )
    ]
    docs = [json.loads(d) for d in w.observe(u, u.close_minute(*bar))]
    assert any(d["pattern"] == "DONCHIAN_BREAKOUT_UP" and d["resolution"] == "1m" for d in docs)


def test_refusals() -> None:
    u = FeatureUniverse()
    for _ in range(2):
        u.add(channel="EXTERNAL", price_precision=2, size_precision=0)
    w = ObservationWriter()
    raises("INVALID_FEATURE_INPUT", lambda: w.register(0, "btc.sim"))
    raises("UNKNOWN_INSTRUMENT", lambda: w.register(1, "A.SIM"))
    w.register(0, "A.SIM")
    changed = u.close_minute(*minute([0, 1], 0, [[10_000], [10_000]]))
    raises("UNKNOWN_INSTRUMENT", lambda: w.observe(u, changed))  # instrument 1 has no id
    raises("UNKNOWN_INSTRUMENT", lambda: w.prime(u))
    w.register(1, "B.SIM")
    assert w.observe(u, changed) == []
    raises("INVALID_COLUMN", lambda: w.observe(u, changed[:5]))
    raises("INVALID_COLUMN", lambda: w.observe(u, np.array([0, 7], dtype="<u4").tobytes()))
    raises("UNKNOWN_INSTRUMENT", lambda: w.observe(u, np.array([2, 0], dtype="<u4").tobytes()))
    raises("UNKNOWN_INSTRUMENT", lambda: w.prime(u, 2))
    for bad in (-1, 2**32, True):
        with pytest.raises((ValueError, TypeError)):
            w.prime(u, bad)
    with pytest.raises(TypeError):
        w.observe(object(), changed)  # type: ignore[arg-type]


# the store


def doc(instrument_id: str, resolution: str, ts_event: int) -> bytes:
    values = {"rsi_14.value": {"kind": "DECIMAL", "scale": 4, "value": "71.0000"}}
    return json.dumps(document(instrument_id, resolution, ts_event, "RSI_ENTER_OVERBOUGHT", values)).encode()


def test_the_store_keeps_the_newest_in_order() -> None:
    assert Observations().capacity == DEFAULT_CAPACITY == 100_000
    store = Observations(capacity=3)
    assert store.add([doc("A.SIM", "1m", t) for t in range(5)]) == 5
    assert len(store) == 3 and store.sequence == 5
    kept = store.page()
    assert [s.sequence for s in kept] == [3, 4, 5] and [s.ts_event for s in kept] == [2, 3, 4]
    assert kept[0].document == json.loads(doc("A.SIM", "1m", 2))
    assert store.page()[0].document is kept[0].document  # decoded once, never recomputed
    for bad in (0, -1, True, 1.5):
        with pytest.raises(ValueError):
            Observations(capacity=bad)  # type: ignore[arg-type]


def test_the_store_filters() -> None:
    store = Observations()
    store.add([doc(i, r, t) for t in range(10) for i in ("A.SIM", "B.SIM") for r in ("1m", "5m")])
    assert len(store.page()) == 40
    assert {s.document["instrument_id"] for s in store.page(instrument_id="B.SIM")} == {"B.SIM"}
    assert len(store.page(instrument_id="B.SIM", resolution="5m")) == 10
    assert store.page(instrument_id="C.SIM") == [] and store.page(resolution="1d") == []
    assert [s.ts_event for s in store.page(instrument_id="A.SIM", resolution="1m", start=3, end=5)] == [3, 4, 5]
    assert [s.ts_event for s in store.page(instrument_id="A.SIM", resolution="1m", start=8)] == [8, 9]
    assert [s.ts_event for s in store.page(instrument_id="A.SIM", resolution="1m", end=1)] == [0, 1]
    assert len(store.page(start=4, end=4)) == 4
    after = store.page(after=30)
    assert [s.sequence for s in after] == list(range(31, 41))
    assert store.page(after=40) == [] and len(store.page(after=-5)) == 40
    with pytest.raises(ValueError):
        store.page(start=5, end=4)
