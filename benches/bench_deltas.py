"""The screener's minute close from the 1-minute bars in to every ``svc.feature_row_delta``
encoded, for 1,000 instruments (``SPINE_BENCH_INSTRUMENTS``) warmed and run live as in
``bench_universe.py``: at 00:00 UTC, when all seven resolutions close (7,000 rows), and at
23:59, when only 1m closes (1,000 rows). Target: 2 ms.

- spine: one ``DeltaWriter.close_minute`` call: the universe's close, then in Rust every
  changed row's values against the ones last published and its document encoded once (one
  ``bytes`` per document, ready for ``Hub.publish``).
- python: what a user writes with the same universe: ``FeatureUniverse.close_minute``, then
  per changed row ``row()``, ``spine.features.row_delta`` against the row kept from the last
  minute, and ``canonical_json`` to encode it.

Both produce the same documents, byte for byte (checked before timing). Each round's setup
(untimed) copies the universe warmed up to the day's start, closes the day's minutes, and
publishes every row once. Smoke mode (CI): SPINE_BENCH_INSTRUMENTS=5 and --benchmark-disable.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from benches.bench_universe import _DAY_START, _INDEXES, _LIVE_MINUTES, _MIDNIGHT, COLUMNS
from benches.sizes import INSTRUMENTS
from spine._core import canonical_json
from spine.features import DeltaWriter, FeatureUniverse, row_delta

RESOLUTIONS = ("1m", "5m", "15m", "30m", "1h", "4h", "1d")
IDS = [f"SYM{i}USDT.SIM" for i in range(INSTRUMENTS)]
_BARS = [_INDEXES, *(_MIDNIGHT[k] for k in COLUMNS)]
_LAST = [_INDEXES, *_LIVE_MINUTES[-1]]

Rows = dict[tuple[int, int], dict[str, Any]]


def _before(bars: list[Any]) -> FeatureUniverse:
    """The day-start universe after the day's minutes live up to the one before ``bars``."""
    u = _DAY_START.copy()
    for minute in _LIVE_MINUTES:
        if minute[0] is bars[1]:
            break
        u.close_minute(_INDEXES, *minute)
    return u


def _spine_setup(bars: list[Any] = _BARS) -> tuple[tuple[DeltaWriter, FeatureUniverse, list[Any]], dict[str, Any]]:
    u, w = _before(bars), DeltaWriter()
    for i, name in enumerate(IDS):
        w.register(i, name)
    w.refresh(u)
    return (w, u, bars), {}


def _spine(w: DeltaWriter, u: FeatureUniverse, bars: list[Any]) -> list[bytes]:
    _, documents = w.deltas(u, u.close_minute(*bars))
    return documents


def _python_setup(bars: list[Any] = _BARS) -> tuple[tuple[FeatureUniverse, Rows, list[Any]], dict[str, Any]]:
    u = _before(bars)
    published = {(i, r): u.row(i, name) for i in range(INSTRUMENTS) for r, name in enumerate(RESOLUTIONS)}
    return (u, published, bars), {}


def _python(u: FeatureUniverse, published: Rows, bars: list[Any]) -> list[bytes]:
    changed = np.frombuffer(u.close_minute(*bars), dtype="<u4").reshape(-1, 2).tolist()
    documents = []
    for i, r in changed:
        resolution = RESOLUTIONS[r]
        row = u.row(i, resolution)
        ts = u.last_ts_event(i, resolution)
        document = row_delta(
            published[(i, r)], row, instrument_id=IDS[i], resolution=resolution, ts_event=0 if ts is None else ts
        )
        published[(i, r)] = row
        if document["operations"]:
            documents.append(canonical_json(document))
    return documents


@pytest.mark.parametrize("bars", [_BARS, _LAST], ids=["midnight", "day-minute"])
def test_both_rivals_encode_the_same_documents(bars: list[Any]) -> None:
    (w, u, _), _ = _spine_setup(bars)
    (v, published, _), _ = _python_setup(bars)
    ours, theirs = _spine(w, u, bars), _python(v, published, bars)
    assert len(ours) == INSTRUMENTS * (len(RESOLUTIONS) if bars is _BARS else 1)
    assert ours == theirs


@pytest.mark.benchmark(group="midnight-deltas")
@pytest.mark.parametrize("rival", ["spine", "python"])
def test_midnight_deltas(benchmark: BenchmarkFixture, rival: str) -> None:
    run, setup, rounds = {"spine": (_spine, _spine_setup, 10), "python": (_python, _python_setup, 5)}[rival]
    benchmark.pedantic(run, setup=setup, rounds=rounds, iterations=1)


@pytest.mark.benchmark(group="day-minute-deltas")
@pytest.mark.parametrize("rival", ["spine", "python"])
def test_day_minute_deltas(benchmark: BenchmarkFixture, rival: str) -> None:
    if rival == "spine":
        benchmark.pedantic(_spine, setup=lambda: _spine_setup(_LAST), rounds=10, iterations=1)
    else:
        benchmark.pedantic(_python, setup=lambda: _python_setup(_LAST), rounds=5, iterations=1)
