"""``spine.screener.feed.turns``: what the source yields before it next waits comes as one
list, with no timer; its error ends the iteration; a busy caller holds the reader back."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest

from spine.screener.feed import turns


async def _source(chunks: list[list[int]], produced: list[int], fail: bool = False) -> AsyncIterator[int]:
    for chunk in chunks:
        for item in chunk:
            produced.append(item)
            yield item
        await asyncio.sleep(0.01)  # the socket: nothing more yet
    if fail:
        raise ConnectionError("the stream ended")


def test_a_chunk_comes_as_one_list_and_the_error_follows() -> None:
    async def run() -> list[list[int]]:
        got: list[list[int]] = []
        with pytest.raises(ConnectionError):
            async with contextlib.aclosing(turns(_source([[1, 2, 3], [4], [5, 6]], [], fail=True))) as batches:
                async for batch in batches:
                    got.append(batch)
        return got

    assert asyncio.run(run()) == [[1, 2, 3], [4], [5, 6]]


def test_a_busy_caller_holds_the_reader_to_one_more_item() -> None:
    async def run() -> tuple[list[int], list[int]]:
        produced: list[int] = []
        async with contextlib.aclosing(turns(_source([[1, 2], [3, 4, 5, 6]], produced))) as batches:
            first = await anext(batches)
            await asyncio.sleep(0.05)  # a catch-up awaiting pages: the second chunk is due meanwhile
            return first, list(produced)

    first, produced = asyncio.run(run())
    assert first == [1, 2] and produced == [1, 2, 3]
