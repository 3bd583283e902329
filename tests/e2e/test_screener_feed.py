"""The screener's feed from a real ``spine node``: every instrument warmed at seven
resolutions from the node's durable bars, live closes folded in sequence, and rows equal to
a universe warmed from the same bars (the reference: one bulk warm of the node's series)."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest
from feeds import folded, warmed_feed
from nodes import ok

from reference.wire_validator import validate
from spine.features import FeatureUniverse
from spine.screener.feed import NodeFeed
from spine.screener.node_client import bar_columns
from spine.screener.rows import RESOLUTIONS, Rows

IID = "BTCUSDT.SIM"
COLUMNS = ("ts_event", "open", "high", "low", "close", "volume")


def run_feed(base: str, closes: int) -> tuple[Rows, NodeFeed]:
    """Warm from the node, then follow until ``closes`` live closes are folded."""

    async def run() -> tuple[Rows, NodeFeed]:
        async with warmed_feed(base) as (rows, feed):
            stop = asyncio.Event()
            follow = asyncio.create_task(feed.follow(stop))
            await asyncio.wait_for(folded(rows, closes), 30)
            stop.set()
            await asyncio.wait_for(follow, 15)
            return rows, feed

    return asyncio.run(run())


@pytest.fixture(scope="module")
def fed(base: str) -> tuple[Rows, NodeFeed]:
    return run_feed(base, closes=60)


def test_every_instrument_has_a_valid_row_at_each_resolution(fed: tuple[Rows, NodeFeed]) -> None:
    rows, feed = fed
    assert len(rows.ids) == 48 and feed.channel == "EXTERNAL"
    for iid in rows.ids:
        for resolution in RESOLUTIONS:
            validate(rows.row(iid, resolution), "svc.feature_row")


def test_live_closes_fold_in_sequence(fed: tuple[Rows, NodeFeed], base: str) -> None:
    rows, feed = fed
    assert rows.processed >= 60 and feed.connects == 1 and feed.reconnects == 0 and feed.last_error is None
    served = ok(base, f"/v2/bars?instrument_id={IID}&limit=5000")["bars"]
    assert rows.sequence[IID] in {bar["sequence"] for bar in served}


def test_rows_equal_one_warm_of_the_same_bars(fed: tuple[Rows, NodeFeed], base: str) -> None:
    """The reference: a fresh universe, observing what the node observed, warmed at once
    from the node's bars up to the last one the feed folded."""
    rows, _ = fed
    instrument = next(i for i in ok(base, "/v2/instruments?limit=1000")["items"] if i["instrument_id"] == IID)
    page = ok(base, f"/v2/bars?instrument_id={IID}&limit=5000")
    last = rows.row(IID, "1m")["ts_event"]
    bars = bar_columns(
        [b for b in page["bars"] if int(b["ts_event"]) <= int(last)],
        instrument["price_precision"],
        instrument["size_precision"],
    )
    reference = FeatureUniverse()
    index = reference.add(
        channel="EXTERNAL", price_precision=instrument["price_precision"], size_precision=instrument["size_precision"]
    )
    for span in page["coverage"]["observed"]:
        start, end = int(span["start"]), min(int(span["end"]), int(last))
        if start < end:
            reference.observe(index, start, end)
    reference.warm(index, *(np.ascontiguousarray(bars[k]) for k in COLUMNS))
    mismatched: list[Any] = [r for r in RESOLUTIONS if reference.row(index, r) != rows.row(IID, r)["values"]]
    assert mismatched == []
