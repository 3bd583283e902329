"""Point-in-time screens: a ``svc.screen_definition`` whose ``as_of`` is set is evaluated over
rows recomputed in a fresh universe from the nodes' durable 1-minute bars closing at or before
``as_of`` (the node's ``end`` is inclusive), with the nodes' observed spans cut at that minute,
so no later bar or observation can reach a value. Rows the retained history cannot warm by
then are ABSENT with the kernels' own reason (``WARMING_UP`` before any bar).

Only the instruments in the definition's scope are read (a few node requests in flight at
once), at most :data:`MAX_INSTRUMENTS` of them. An ``as_of`` after the newest minute the
screener has folded is refused: the answer would still change as bars arrive. A node that
cannot be read for an instrument in scope fails the whole screen (502), never a part of it."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from spine.http.errors import HttpError
from spine.screener.node_client import UpstreamError
from spine.screener.rows import Rows
from spine.screener.screens import ROUTE, check, evaluate

if TYPE_CHECKING:
    from spine.screener.feed import NodeFeed

__all__ = ["MAX_INSTRUMENTS", "is_point_in_time", "screen_as_of"]

#: Instruments one point-in-time screen may read: each costs its node's retained history (at
#: most the node's series capacity, 5,000 bars by default) and a fresh fold of it.
MAX_INSTRUMENTS = 64


class _AsOf(msgspec.Struct):
    as_of: str | None = None


def is_point_in_time(body: bytes) -> bool:
    """Whether a definition asks for a point-in-time screen (``as_of`` a string; anything else
    but null is left to the grammar check to refuse)."""
    try:
        return msgspec.json.decode(body, type=_AsOf).as_of is not None
    except msgspec.ValidationError:
        return False


async def screen_as_of(body: bytes, feeds: Sequence[NodeFeed], held: Rows, concurrency: int) -> dict[str, Any]:
    """The ``svc.screen_result`` of ``body`` as the rows stood at its ``as_of``: its scope among
    the instruments ``held`` (each read from the feed that serves it), ``concurrency`` node
    requests in flight. Refusals are :class:`HttpError` (400 INVALID_BODY, 502
    UPSTREAM_UNAVAILABLE naming the node)."""
    check(body)
    definition = msgspec.json.decode(body)
    as_of = int(definition["as_of"])
    if held.newest is None or as_of > held.newest:
        newest = "none yet" if held.newest is None else str(held.newest)
        raise HttpError(
            "INVALID_BODY",
            f"{ROUTE}: $.as_of: {as_of} is after the newest minute this screener has "
            f"folded ({newest}); allowed: an instant at or before it (as_of null "
            "screens the current rows)",
        )
    wanted = None if definition["instrument_ids"] is None else set(definition["instrument_ids"])
    scope = [iid for iid in held.ids if wanted is None or iid in wanted]
    if len(scope) > MAX_INSTRUMENTS:
        raise HttpError(
            "INVALID_BODY",
            f"{ROUTE}: $.instrument_ids: a point-in-time screen reads at most "
            f"{MAX_INSTRUMENTS} instruments' history; {len(scope)} are in scope (name "
            f"at most {MAX_INSTRUMENTS} in instrument_ids)",
        )
    sources = {iid: feed for feed in feeds for iid in feed.instruments}
    rows = Rows()
    for iid in scope:
        rows.add(sources[iid].instruments[iid], sources[iid].channel or "EXTERNAL")
    gate = asyncio.Semaphore(concurrency)

    async def one(iid: str) -> None:
        feed = sources[iid]
        async with gate:
            bars, coverage = await feed.history(feed.instruments[iid], end=as_of)
        rows.warm(iid, bars, coverage, through=as_of)

    try:
        async with asyncio.TaskGroup() as group:
            for iid in scope:
                group.create_task(one(iid))
    except* UpstreamError as failed:
        error = failed.exceptions[0]
        assert isinstance(error, UpstreamError)
        raise HttpError(
            "UPSTREAM_UNAVAILABLE",
            f"{ROUTE}: as_of {as_of} reads the history of the instruments in "
            f"scope; {error.node} could not be read ({error.request}: "
            f"{error.cause})",
        ) from None
    return evaluate(body, rows.table(), rows.row, as_of)
