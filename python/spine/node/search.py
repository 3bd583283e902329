"""Instrument search: ``POST /v2/instruments/search`` ranks the venue's instruments (as
``svc.instrument_ref`` documents) against a text and keeps the result, which
``GET /v2/instruments/search/{id}`` serves again.

Matching is case-insensitive (``str.casefold``) over the symbol, the base, quote and settlement
currencies and the underlying. Ranking: the symbol equals the text, then some field starts
with it, then some field contains it; ties by instrument id. The search id is the identity
``search_id`` of the normalised query and the node's run id, so one query in one run always
has the same id; the newest :data:`KEPT` rankings are kept in memory, whole: the POST answers
their first page (``limit`` items) and ``next_cursor``, and ``GET /v2/instruments/search/{id}``
pages through them with ``cursor`` and ``limit`` like every list route.
"""

from __future__ import annotations

import re
import time
from collections import OrderedDict
from collections.abc import Collection, Iterable
from typing import Any, get_args

from spine._core import WIRE_VERSION, identity
from spine.http.bodies import InstrumentClass, SearchBody
from spine.http.errors import HttpError
from spine.http.request import Query
from spine.node.view import NodeView
from spine.wire.cursors import InvalidCursor, paginate

__all__ = ["KEPT", "SEARCHED_FIELDS", "SearchHandlers", "rank"]

KEPT = 256
SEARCHED_FIELDS = ("symbol", "base_currency", "quote_currency", "settlement_currency", "underlying")
_CLASSES = get_args(InstrumentClass)
_SEARCH_ID = re.compile(r"[0-9a-f]{64}")


def _tier(doc: dict[str, Any], needle: str) -> int | None:
    """0: exact symbol; 1: some field starts with the text; 2: some field contains it."""
    symbol = doc["symbol"].casefold()
    if symbol == needle:
        return 0
    fields = [symbol, *(doc[name].casefold() for name in SEARCHED_FIELDS[1:] if doc[name])]
    if any(field.startswith(needle) for field in fields):
        return 1
    if any(needle in field for field in fields):
        return 2
    return None


def rank(docs: Iterable[dict[str, Any]], text: str, classes: Collection[str] | None = None) -> list[dict[str, Any]]:
    """The instrument documents matching ``text`` (and in ``classes``, when given), best first."""
    needle = text.casefold()
    scored = []
    for doc in docs:
        if classes is not None and doc["instrument_class"] not in classes:
            continue
        tier = _tier(doc, needle)
        if tier is not None:
            scored.append((tier, doc["instrument_id"], doc))
    scored.sort(key=lambda entry: entry[:2])
    return [doc for _, _, doc in scored]


def _query(body: SearchBody) -> dict[str, Any]:
    """The accepted query with its defaults filled; classes distinct, in the vocabulary's order."""
    classes = body.instrument_classes
    return {
        "version": WIRE_VERSION,
        "schema_id": "svc.search_query",
        "schema_version": 1,
        "text": body.text,
        "instrument_classes": None if classes is None else [c for c in _CLASSES if c in classes],
        "limit": body.limit,
    }


class SearchHandlers:
    """The two search routes over one :class:`~spine.node.view.NodeView`."""

    def __init__(self, node: NodeView) -> None:
        self.node = node
        #: search id -> (the accepted query, every match best first, when it ran)
        self.kept: OrderedDict[str, tuple[dict[str, Any], list[dict[str, Any]], int]] = OrderedDict()

    def instruments_search(self, query: Query, params: dict[str, str], body: SearchBody) -> dict[str, Any]:
        accepted = _query(body)
        search_id = identity("search_id", {"query": accepted, "run_id": self.node.run_id})
        docs = self.node.instrument_docs()
        matches = rank(docs, body.text, accepted["instrument_classes"])
        self.kept[search_id] = (accepted, matches, time.time_ns())
        self.kept.move_to_end(search_id)
        while len(self.kept) > KEPT:
            self.kept.popitem(last=False)
        return self._page(search_id, None, body.limit)

    def _page(self, search_id: str, cursor: str | None, limit: int) -> dict[str, Any]:
        accepted, matches, ran = self.kept[search_id]
        try:
            items, next_cursor = paginate(f"/v2/instruments/search/{search_id}", cursor, limit, matches)
        except InvalidCursor as error:
            raise HttpError("INVALID_CURSOR", str(error).split(": ", 1)[-1]) from None
        return {
            "version": WIRE_VERSION,
            "schema_id": "svc.search_result",
            "schema_version": 1,
            "search_id": search_id,
            "query": accepted,
            "items": items,
            "total": len(matches),
            "next_cursor": next_cursor,
            "ts_event": str(ran),
        }

    def instruments_search_result(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        search_id = params["id"]
        if not _SEARCH_ID.fullmatch(search_id):
            raise HttpError("INVALID_PARAMETER", f"id={search_id!r} is not a search id (64 lowercase hex digits)")
        if search_id not in self.kept:
            raise HttpError(
                "NOT_FOUND",
                f"no search {search_id} is kept on this node (the newest {KEPT} "
                "of this run are); POST /v2/instruments/search again",
            )
        return self._page(search_id, query.text("cursor"), query.limit(self.kept[search_id][0]["limit"]))
