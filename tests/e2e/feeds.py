"""The screener's feed over a node, in-process, for the tests that drive it directly."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx

from spine.screener.feed import NodeFeed
from spine.screener.node_client import NodeClient
from spine.screener.rows import Rows


@asynccontextmanager
async def warmed_feed(url: str, timeout: float = 10.0) -> AsyncIterator[tuple[Rows, NodeFeed]]:
    """Rows and the feed of the node at ``url``, warmed (its live channel, quick backoff)."""
    async with httpx.AsyncClient(timeout=httpx.Timeout(timeout)) as client:
        rows = Rows()
        feed = NodeFeed(NodeClient(url, client), rows, channel=None, concurrency=4, backoff=(0.05, 0.5))
        await asyncio.wait_for(feed.warm(), 60)
        yield rows, feed


async def folded(rows: Rows, closes: int) -> None:
    """Wait (bounded by the caller) until ``closes`` live closes are folded."""
    while rows.processed < closes:
        await asyncio.sleep(0.05)
