"""The screener's minute close as the process runs it, from the node's raw SSE event payloads
(``svc.bar_envelope``, one bar each, as the node streams them) in to every event queued for a
subscriber and every observation kept: a ``NodeFeed`` over ``Rows`` with a ``RowStream`` (one
subscriber keeping everything) and an ``Observer``, for 1,000 instruments
(``SPINE_BENCH_INSTRUMENTS``) warmed and run live as in ``bench_universe.py``: at 00:00 UTC,
when all seven resolutions close (7,000 rows), and at 23:59, when only 1m closes (1,000 rows).
Targets (issue 34): a day minute under 2 ms, midnight under 8 ms.

- spine: ``NodeFeed._take``: one Rust call for the turn (``LiveBook.turn``: each payload read,
  the universe closed, the deltas framed, the observations written, detached from the
  interpreter), then one ``Hub.publish_frames`` and the documents kept;
- per-event: ``NodeFeed._take_decoded``, the path the feed took before (and takes for a turn
  the strict reader refuses): ``json.loads`` per payload, the bar columns parsed per event,
  one ``Rows.close_many``, then per changed row a frame built in Python and a publish.

Each runs with the observer (as the process does) and without it (``...-alone``, the case the
issue's targets and ``bench_screener_close.py`` measure). Both queue the same bytes (ids
included) and keep the same observations, rows and sequences (checked before timing). Each
round's setup (untimed) copies the universe warmed up to the day's start, closes the day's
minutes before the timed one, and publishes every row once.
Smoke mode (CI): SPINE_BENCH_INSTRUMENTS=5 and --benchmark-disable.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

import msgspec
import numpy as np
import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from benches.bench_deltas import _BARS, _LAST, IDS, RESOLUTIONS, _before
from benches.feature_rivals import PRICE_SCALE, SIZE_SCALE
from benches.sizes import INSTRUMENTS
from spine._core import bar_row
from spine.fanout import Subscription
from spine.screener.feed import NodeFeed
from spine.screener.observations import Observations, Observer
from spine.screener.rows import Rows
from spine.screener.stream import RowStream
from spine.wire.projection import envelope

MINUTES = {"midnight": _BARS, "day-minute": _LAST}
NODE = "http://127.0.0.1:8700"
#: A queue long enough to keep a whole midnight (7,000 events) and the rows published first.
CAPACITY = 16_384
SEQUENCE = 10_000


class _Node:
    base_url = NODE
    name = "node-1"


def _payloads(bars: list[Any]) -> list[bytes]:
    """The minute's events as the node streams them: each instrument's bar in an envelope with
    its coverage (one observed span), encoded as the node's ``frame`` encodes it."""
    _, ts, o, h, lo, c, v = bars
    out = []
    for i, iid in enumerate(IDS):
        row = bar_row(
            SEQUENCE,
            int(ts[i]),
            int(o[i]),
            int(h[i]),
            int(lo[i]),
            int(c[i]),
            int(v[i]),
            price_precision=PRICE_SCALE,
            size_precision=SIZE_SCALE,
        )
        coverage = {
            "version": "spine.v2",
            "schema_id": "svc.series_coverage",
            "schema_version": 1,
            "instrument_id": iid,
            "channel": "EXTERNAL",
            "retention_state": "retained",
            "exhausted": False,
            "history_terminal": False,
            "sparse_ok": False,
            "bar_count": SEQUENCE,
            "observed": [{"start": str(int(ts[i]) - SEQUENCE * 60_000_000_000), "end": str(int(ts[i]))}],
            "gaps": [],
            "confirmed_empty": [],
            "newest_close": str(int(ts[i])),
            "resume_from": str(int(ts[i])),
        }
        document = envelope(
            instrument_id=iid,
            bar_type=f"{iid}-1-MINUTE-LAST-EXTERNAL",
            resolution="1m",
            channel="EXTERNAL",
            bars=msgspec.Raw(row),
            coverage=coverage,
            withheld=[],
            next_cursor=None,
        )
        out.append(msgspec.json.encode(document))
    return out


def _setup(bars: list[Any], observer: bool = True) -> tuple[NodeFeed, Subscription, Observations]:
    """A feed over rows just before ``bars`` (every sequence one below the minute's), a
    RowStream with one subscriber that has taken every row's first publication (as after a
    warm), and an Observer unless ``observer`` is False."""
    rows = Rows()
    feed = NodeFeed(_Node(), rows, channel="EXTERNAL", concurrency=1, backoff=(1.0, 1.0))  # type: ignore[arg-type]
    for iid in IDS:
        instrument = {"instrument_id": iid, "price_precision": PRICE_SCALE, "size_precision": SIZE_SCALE}
        feed.instruments[iid] = instrument
        rows.add(instrument, "EXTERNAL", NODE)
        rows.sequence[iid] = SEQUENCE - 1
    rows.universe = _before(bars)  # the same instruments in the same order
    stream = RowStream(rows)
    subscription = stream.fanout.subscribe(capacity=CAPACITY)
    store = Observations()
    if observer:
        Observer(rows, store)
    rows._changed(
        np.array([(i, r) for i in range(INSTRUMENTS) for r in range(len(RESOLUTIONS))], dtype="<u4").tobytes()
    )
    subscription.drain()
    return feed, subscription, store


def _drive(step: Coroutine[Any, Any, None]) -> None:
    """Run a fold that never waits (no catch-up), without an event loop."""
    try:
        step.send(None)
    except StopIteration:
        return
    raise RuntimeError("the fold waited (a catch-up?)")


def _turn(feed: NodeFeed, payloads: list[bytes]) -> None:
    _drive(feed._take(payloads))


def _per_event(feed: NodeFeed, payloads: list[bytes]) -> None:
    _drive(feed._take_decoded(payloads))


@pytest.mark.parametrize("minute", MINUTES)
@pytest.mark.parametrize("observer", [True, False])
def test_both_paths_queue_and_keep_the_same(minute: str, observer: bool) -> None:
    bars = MINUTES[minute]
    payloads = _payloads(bars)
    (ours, ours_queue, ours_store), (theirs, theirs_queue, theirs_store) = (_setup(bars, observer) for _ in range(2))
    _turn(ours, payloads)
    _per_event(theirs, payloads)
    queued = ours_queue.drain()
    assert queued.count(b"\n\n") == INSTRUMENTS * (len(RESOLUTIONS) if minute == "midnight" else 1)
    assert queued == theirs_queue.drain()
    assert list(ours_store._kept) == list(theirs_store._kept)
    assert dict(ours.rows.sequence) == dict(theirs.rows.sequence) == {iid: SEQUENCE for iid in IDS}
    assert (ours.rows.version, ours.rows.processed, ours.rows.newest, ours.offered) == (
        theirs.rows.version,
        theirs.rows.processed,
        theirs.rows.newest,
        theirs.offered,
    )
    for iid in IDS:
        for r in RESOLUTIONS:
            assert ours.rows.row(iid, r) == theirs.rows.row(iid, r), (iid, r)


RIVALS = ["spine", "per-event", "spine-alone", "per-event-alone"]


@pytest.mark.benchmark(group="screener-turn-midnight")
@pytest.mark.parametrize("rival", RIVALS)
def test_midnight_turn(benchmark: BenchmarkFixture, rival: str) -> None:
    _bench(benchmark, rival, _BARS)


@pytest.mark.benchmark(group="screener-turn-day-minute")
@pytest.mark.parametrize("rival", RIVALS)
def test_day_minute_turn(benchmark: BenchmarkFixture, rival: str) -> None:
    _bench(benchmark, rival, _LAST)


def _bench(benchmark: BenchmarkFixture, rival: str, bars: list[Any]) -> None:
    payloads = _payloads(bars)
    run = {"spine": _turn, "per-event": _per_event}[rival.removesuffix("-alone")]

    def setup() -> tuple[tuple[NodeFeed, list[bytes]], dict[str, Any]]:
        feed, _, _ = _setup(bars, observer=not rival.endswith("-alone"))
        return (feed, payloads), {}

    benchmark.pedantic(run, setup=setup, rounds=10, iterations=1)
