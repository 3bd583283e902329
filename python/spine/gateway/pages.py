"""Pages over the gateway's database: an offset under a signed cursor bound to the route (and
whatever narrows the list), read with one row more than asked to know whether a page follows.

A list that changes between pages may skip or repeat an item, as every offset cursor does."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from spine.http.errors import HttpError
from spine.http.request import Query
from spine.wire.cursors import InvalidCursor, decode_cursor, encode_cursor

__all__ = ["db_page"]

T = TypeVar("T")


async def db_page(
    query: Query, route: str, fetch: Callable[[int, int], list[T]], default: int = 100
) -> tuple[list[T], str | None]:
    """One page of ``fetch(offset, limit)`` (run in a thread: the database blocks) at the query's
    ``cursor`` and ``limit``."""
    limit = query.limit(default)
    cursor = query.text("cursor")
    offset = 0
    if cursor is not None:
        try:
            offset = decode_cursor(route, cursor)
        except InvalidCursor as error:
            raise HttpError("INVALID_CURSOR", str(error).split(": ", 1)[-1]) from None
    rows = await asyncio.to_thread(fetch, offset, limit + 1)
    following = encode_cursor(route, offset + limit) if len(rows) > limit else None
    return rows[:limit], following


def page_document(
    schema_id: str, items: list[Any], next_cursor: str | None, schema_version: int = 1, **fields: Any
) -> dict[str, Any]:
    """An own page document (``schemas/own/<schema_id>.json``)."""
    return {
        "version": "spine.v2",
        "schema_id": schema_id,
        "schema_version": schema_version,
        **fields,
        "items": items,
        "next_cursor": next_cursor,
    }
