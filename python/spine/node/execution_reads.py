"""A paper node's execution read handlers over its view's ``execution``: the account, the
accounts, and the orders, fills and positions as ``svc.execution_report_page`` (one
instrument's with ``instrument_id``), paged like every list."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from spine.http.errors import HttpError
from spine.http.request import Query
from spine.node.view import ExecutionView, NodeView
from spine.wire.cursors import InvalidCursor, LimitOutOfRange, paginate

__all__ = ["ExecutionHandlers"]

#: An execution page's ``limit`` default (its maximum is every list's).
PAGE_DEFAULT = 100


class ExecutionHandlers:
    def __init__(self, node: NodeView) -> None:
        self.node = node

    def _reads(self) -> ExecutionView:
        execution = self.node.execution
        assert execution is not None  # the app routes these to a paper node only
        return execution

    def account_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        accounts = self._reads().accounts()
        if not accounts:
            raise HttpError("NOT_READY", "the sandbox account is not open yet; retry once the node has started")
        return accounts[0]

    def accounts_list(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        items, cursor = self._page("/v2/accounts", query, self._reads().accounts())
        return {"version": "spine.v2", "schema_id": "svc.account_page", "schema_version": 1, **_items(items, cursor)}

    def orders_list(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        return self._report("orders", query, self._reads().orders)

    def fills_list(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        return self._report("fills", query, self._reads().fills)

    def positions_list(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        return self._report("positions", query, self._reads().positions)

    def _report(self, kind: str, query: Query, read: Callable[[str | None], list[dict[str, Any]]]) -> dict[str, Any]:
        iid = query.instrument_id()
        items, cursor = self._page(f"/v2/{kind}", query, read(iid))
        page = {"version": "spine.v2", "schema_id": "svc.execution_report_page", "schema_version": 1, "kind": kind}
        return {**page, **_items(items, cursor)}

    def _page(self, route: str, query: Query, items: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str | None]:
        try:
            return paginate(route, query.text("cursor"), query.limit(PAGE_DEFAULT), items)
        except InvalidCursor as error:
            raise HttpError("INVALID_CURSOR", str(error).split(": ", 1)[-1]) from None
        except LimitOutOfRange as error:
            raise HttpError("LIMIT_OUT_OF_RANGE", str(error).split(": ", 1)[-1]) from None


def _items(items: list[dict[str, Any]], cursor: str | None) -> dict[str, Any]:
    return {"items": items, "next_cursor": cursor}
