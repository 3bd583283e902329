"""Property tests: ``DeltaWriter``'s documents are exactly the differences of consecutive row
snapshots.

Over random minutes (instruments missing, minutes skipped), watermark advances and registry
changes (the universe swapped for one of another feature selection, warmed on the same bars,
then ``refresh``), every document the writer encodes decodes to what the plain-Python oracle
(``reference.row_deltas``) computes from ``FeatureUniverse.row`` before and after, one per
changed row (a row whose close time alone moved: a document with no operations) and none for
the rest; applied to the previous row it gives the next; it is canonical JSON and valid for the
independent validator.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from reference.folding import MINUTE_NS
from reference.row_deltas import apply, delta
from reference.wire_validator import validate
from spine._core import canonical_json
from spine.features import DeltaWriter, FeatureUniverse, feature_specs

RESOLUTIONS = ("1m", "5m", "15m", "30m", "1h", "4h", "1d")
M = MINUTE_NS
BASE = 20_000 * 1440 * M - 7 * M
INSTRUMENTS = 3
FEATURE_IDS = [spec["feature_id"] for spec in feature_specs()]


def ident(i: int) -> str:
    return f"I{i}.SIM"


def snapshot(u: FeatureUniverse) -> dict[tuple[int, str], tuple[int | None, dict[str, Any]]]:
    return {(i, r): (u.last_ts_event(i, r), u.row(i, r)) for i in range(len(u)) for r in RESOLUTIONS}


def fresh(feature_ids: list[str] | None, history: list[dict[int, tuple[int, ...]]]) -> FeatureUniverse:
    """A universe of ``feature_ids`` warmed on every instrument's bars so far."""
    u = FeatureUniverse(feature_ids=feature_ids)
    for i, bars in enumerate(history):
        u.add(channel="EXTERNAL", price_precision=2, size_precision=0)
        ts = sorted(bars)
        if ts:
            cols = [np.array([bars[t][f] for t in ts], dtype=np.int64) for f in range(5)]
            u.warm(i, np.array(ts, dtype=np.uint64), *cols)
    return u


def check(u: FeatureUniverse, before: dict[Any, Any], result: tuple[bytes, list[bytes]]) -> dict[Any, Any]:
    """The writer's documents are the oracle's from ``before`` to now; returns now."""
    after = snapshot(u)
    rows, documents = result
    pairs = np.frombuffer(rows, dtype="<u4").reshape(-1, 2).tolist()
    assert len(pairs) == len(documents)
    got = {}
    for (i, r), raw in zip(pairs, documents, strict=True):
        document = json.loads(raw)
        assert canonical_json(document) == raw
        validate(document, "svc.feature_row_delta")
        got[(i, RESOLUTIONS[r])] = document
    expected = {}
    for (i, r), (ts, row) in after.items():
        was, previous = before[(i, r)]
        stamp = 0 if ts is None else ts
        want = delta(previous, row, instrument_id=ident(i), resolution=r, ts_event=stamp)
        if want is None and was != ts:
            want = {
                "version": "spine.v2",
                "schema_id": "svc.feature_row_delta",
                "schema_version": 1,
                "instrument_id": ident(i),
                "resolution": r,
                "ts_event": str(stamp),
                "operations": [],
            }
        if want is not None:
            expected[(i, r)] = want
    assert got == expected
    for key, document in got.items():
        assert apply(before[key][1], document) == after[key][1]
    return after


@st.composite
def steps(draw: st.DrawFn) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for _ in range(draw(st.integers(1, 40))):
        kind = draw(st.sampled_from(["close"] * 6 + ["advance", "registry"]))
        if kind == "registry":
            ids = draw(st.one_of(st.none(), st.lists(st.sampled_from(FEATURE_IDS), min_size=1, unique=True)))
            out.append((kind, ids))
        else:
            out.append(
                (
                    kind,
                    (
                        draw(st.integers(1, 20)),
                        draw(st.integers(1, 2**INSTRUMENTS - 1)),
                        draw(st.integers(0, 2**32 - 1)),
                    ),
                )
            )
    return out


@given(steps())
def test_deltas_are_the_differences_of_consecutive_rows(plan: list[tuple[str, Any]]) -> None:
    history: list[dict[int, tuple[int, ...]]] = [{} for _ in range(INSTRUMENTS)]
    u, w = fresh(None, history), DeltaWriter()
    for i in range(INSTRUMENTS):
        w.register(i, ident(i))
    empty: dict[Any, Any] = {(i, r): (None, {}) for i in range(INSTRUMENTS) for r in RESOLUTIONS}
    before = check(u, empty, w.refresh(u))
    minute = 0
    for kind, arg in plan:
        if kind == "registry":
            u = fresh(arg, history)
            before = check(u, before, w.refresh(u))
            continue
        skip, mask, seed = arg
        minute += skip
        if kind == "advance":
            before = check(u, before, w.deltas(u, u.advance(BASE + minute * M)))
            continue
        rng = np.random.default_rng(seed)
        chosen = [i for i in range(INSTRUMENTS) if mask >> i & 1]
        ts = BASE + minute * M
        cols: list[list[int]] = [[], [], [], [], []]
        for i in chosen:
            c = 100_000 + int(rng.integers(-500, 500))
            o = c + int(rng.integers(-50, 50))
            bar = (
                o,
                max(o, c) + int(rng.integers(0, 40)),
                min(o, c) - int(rng.integers(0, 40)),
                c,
                int(rng.integers(0, 3)) * int(rng.integers(0, 5_000)),
            )
            history[i][ts] = bar
            for f in range(5):
                cols[f].append(bar[f])
        result = w.deltas(
            u,
            u.close_minute(
                np.array(chosen, dtype=np.uint32),
                np.full(len(chosen), ts, dtype=np.uint64),
                *(np.array(c, dtype=np.int64) for c in cols),
            ),
        )
        before = check(u, before, result)
