"""The screener's minute close as the process runs it, from the node's 1-minute bars in to
every delta encoded, framed and queued for a subscriber: ``spine.screener.rows.Rows`` with
``spine.screener.stream.RowStream`` listening (``DeltaWriter``, SSE framing, ``FanOut.publish``
into a hub with one subscriber keeping everything), for 1,000 instruments
(``SPINE_BENCH_INSTRUMENTS``) warmed and run live as in ``bench_universe.py``: at 00:00 UTC,
when all seven resolutions close (7,000 rows), and at 23:59, when only 1m closes (1,000 rows).
Target (issue 25): 2 ms.

- spine: one ``Rows.close_many`` over every instrument's bar of the minute (one
  ``FeatureUniverse.close_minute``, one ``DeltaWriter.deltas``, then the publishes), as the
  feed folds the closes that arrive together;
- per-instrument: one ``Rows.close`` per instrument, as a close arriving alone is folded (a
  ``close_minute``, a ``deltas`` and its publishes each);
- python: the plain-Python path of ``bench_deltas.py`` (one ``close_minute``, then per changed
  row ``row()``, ``row_delta`` and ``canonical_json``) plus the same framing and publish.

The three queue the same events, byte for byte apart from the ``id:`` line (the rows'
version, which moves once per fold call), and the two Rows paths leave the same rows
(checked before timing). Each round's setup (untimed) copies the universe warmed up to the
day's start, closes the day's minutes before the timed one, and publishes every row once.
Smoke mode (CI): SPINE_BENCH_INSTRUMENTS=5 and --benchmark-disable.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from benches.bench_deltas import _BARS, _LAST, IDS, RESOLUTIONS, _before, _python, _python_setup
from benches.feature_rivals import PRICE_SCALE, SIZE_SCALE
from benches.sizes import INSTRUMENTS
from spine.fanout import FanOut, Subscription
from spine.screener.node_client import Bars
from spine.screener.rows import Rows
from spine.screener.stream import RowStream

MINUTES = {"midnight": _BARS, "day-minute": _LAST}
#: A queue long enough to keep a whole midnight (7,000 events) and the rows published first.
CAPACITY = 16_384


def _columns(bars: list[Any]) -> Bars:
    """A minute's bars as the feed holds them: columns, one row per instrument, sequenced."""
    _, ts, o, h, lo, c, v = bars
    return {
        "ts_event": ts,
        "open": o,
        "high": h,
        "low": lo,
        "close": c,
        "volume": v,
        "sequence": np.full(INSTRUMENTS, 10_000, dtype=np.uint64),
    }


def _rows_setup(bars: list[Any]) -> tuple[Rows, Subscription]:
    """Rows over the universe just before ``bars``, a RowStream listening and one subscriber
    that has taken every row's first publication (as after a warm)."""
    rows = Rows()
    for iid in IDS:
        rows.add({"instrument_id": iid, "price_precision": PRICE_SCALE, "size_precision": SIZE_SCALE}, "EXTERNAL")
        rows.sequence[iid] = 9_999
    rows.universe = _before(bars)  # the same instruments in the same order, warmed once for all rounds
    stream = RowStream(rows)
    subscription = stream.fanout.subscribe(capacity=CAPACITY)
    rows._changed(
        np.array([(i, r) for i in range(INSTRUMENTS) for r in range(len(RESOLUTIONS))], dtype="<u4").tobytes()
    )
    subscription.drain()
    return rows, subscription


def _batched_setup(bars: list[Any]) -> tuple[tuple[Rows, Bars], dict[str, Any]]:
    rows, _ = _rows_setup(bars)
    return (rows, _columns(bars)), {}


def _batched(rows: Rows, columns: Bars) -> bytes:
    return rows.close_many(IDS, columns)


def _each_setup(bars: list[Any]) -> tuple[tuple[Rows, list[tuple[str, Bars]]], dict[str, Any]]:
    rows, _ = _rows_setup(bars)
    columns = _columns(bars)
    return (rows, [(iid, {k: column[i : i + 1] for k, column in columns.items()}) for i, iid in enumerate(IDS)]), {}


def _each(rows: Rows, closes: list[tuple[str, Bars]]) -> None:
    for iid, bars in closes:
        rows.close(iid, bars)


def _plain_setup(bars: list[Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    (u, published, _), _ = _python_setup(bars)
    fanout = FanOut()
    subscription = fanout.subscribe(capacity=CAPACITY)
    return (u, published, bars, fanout), {"subscription": subscription}


def _plain(u: Any, published: Any, bars: list[Any], fanout: FanOut, subscription: Subscription | None = None) -> None:
    """``bench_deltas``' Python path, each document framed and published as the stream does."""
    head = b"id: 1\nevent: delta\ndata: "
    for document in _python(u, published, bars):
        instrument_id, resolution = _key(document)
        fanout.publish(resolution, instrument_id, head + document + b"\n\n")


def _key(document: bytes) -> tuple[str, str]:
    """A delta's instrument and resolution, read off its canonical JSON."""
    iid = document.split(b'"instrument_id":"', 1)[1].split(b'"', 1)[0]
    resolution = document.split(b'"resolution":"', 1)[1].split(b'"', 1)[0]
    return iid.decode(), resolution.decode()


def _events(queued: bytes) -> list[bytes]:
    """The queued SSE events without their ``id:`` lines, in a canonical order."""
    return sorted(event.split(b"\n", 1)[1] for event in queued.split(b"\n\n") if event)


@pytest.mark.parametrize("minute", MINUTES)
def test_every_path_queues_the_same_events(minute: str) -> None:
    bars = MINUTES[minute]
    batched, batched_queue = _rows_setup(bars)
    _batched(batched, _columns(bars))
    (each, closes), _ = _each_setup(bars)
    each_queue = each.listeners[0].__self__.fanout.subscribe(capacity=CAPACITY)  # type: ignore[attr-defined]
    _each(each, closes)
    (u, published, _, fanout), extra = _plain_setup(bars)
    _plain(u, published, bars, fanout)
    ours = _events(batched_queue.drain())
    assert len(ours) == INSTRUMENTS * (len(RESOLUTIONS) if minute == "midnight" else 1)
    assert ours == _events(each_queue.drain()) == _events(extra["subscription"].drain())
    assert batched.sequence == each.sequence and batched.processed == each.processed == INSTRUMENTS
    assert batched.newest == each.newest
    for iid in IDS:
        for r in RESOLUTIONS:
            assert batched.row(iid, r) == each.row(iid, r), (iid, r)


@pytest.mark.benchmark(group="screener-midnight-close")
@pytest.mark.parametrize("rival", ["spine", "per-instrument", "python"])
def test_midnight_close(benchmark: BenchmarkFixture, rival: str) -> None:
    _bench(benchmark, rival, _BARS)


@pytest.mark.benchmark(group="screener-day-minute-close")
@pytest.mark.parametrize("rival", ["spine", "per-instrument", "python"])
def test_day_minute_close(benchmark: BenchmarkFixture, rival: str) -> None:
    _bench(benchmark, rival, _LAST)


def _bench(benchmark: BenchmarkFixture, rival: str, bars: list[Any]) -> None:
    run, setup, rounds = {
        "spine": (_batched, _batched_setup, 10),
        "per-instrument": (_each, _each_setup, 10),
        "python": (_plain, _plain_setup, 5),
    }[rival]
    benchmark.pedantic(run, setup=lambda: setup(bars), rounds=rounds, iterations=1)
