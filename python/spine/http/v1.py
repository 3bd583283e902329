"""What every process's v1 routes share: the version string, the document head and the record
pages (``/signals``, ``/chart-markers``, ``/retirements``, ``/screener-rows``), paged as every
v1 list is.

v1 is a contract of its own (documents ``v1.*`` in ``schemas/v1/``, ``version: "spine.v1"``);
the node's v1 reads are :mod:`spine.node.v1_reads`.
"""

from __future__ import annotations

from typing import Any

from spine.http.errors import HttpError
from spine.http.request import Query
from spine.wire.cursors import InvalidCursor, LimitOutOfRange, paginate

__all__ = ["RECORD_KINDS", "V1_VERSION", "head", "page", "records"]

V1_VERSION = "spine.v1"
RECORD_KINDS = {
    "signals": "signals",
    "chart_markers": "chart-markers",
    "retirements": "retirements",
    "screener_rows": "screener-rows",
}


def head(name: str) -> dict[str, Any]:
    """The head of the document ``v1.<name>``."""
    return {"version": V1_VERSION, "schema_id": f"v1.{name}", "schema_version": 1}


def records(kind: str, query: Query, held: list[Any] | None = None) -> dict[str, Any]:
    """A page of the records of ``kind`` a process holds. A venue node holds none: its page is
    empty (its cursor checks still apply, so a made-up cursor is refused rather than answered)."""
    items, cursor = page(f"/{RECORD_KINDS[kind]}", query, held or [])
    return {**head("records"), "kind": kind, "items": items, "next_cursor": cursor}


def page(route: str, query: Query, items: list[Any]) -> tuple[list[Any], str | None]:
    """The page of ``items`` the query's ``cursor`` and ``limit`` select on ``route``."""
    try:
        return paginate(route, query.text("cursor"), query.limit(100), items)
    except InvalidCursor as error:
        raise HttpError("INVALID_CURSOR", str(error).split(": ", 1)[-1]) from None
    except LimitOutOfRange as error:
        raise HttpError("LIMIT_OUT_OF_RANGE", str(error).split(": ", 1)[-1]) from None
