"""A paper node's execution handlers over its view's ``execution``: the account, the accounts,
and the orders, fills and positions as ``svc.execution_report_page`` (one instrument's with
``instrument_id``), paged like every list; the operator's paper orders and cancels (202 with
the command's ``svc.command_result``) and their commands."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from spine.http.app import Relayed
from spine.http.bodies import CancelBody, OrderBody
from spine.http.errors import HttpError
from spine.http.request import Query
from spine.node.view import ExecutionView, NodeView, OrderRefused
from spine.wire.cursors import InvalidCursor, LimitOutOfRange, paginate

__all__ = ["ExecutionHandlers"]

_encode = msgspec.json.Encoder().encode

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

    # the operator's paper orders (the app has refused them already unless private-operator)

    def orders_submit(self, query: Query, params: dict[str, str], body: OrderBody) -> Relayed:
        _gates("POST /v2/orders", body.paper, body.confirmed)
        if (body.order_type == "LIMIT") != (body.price is not None):
            raise HttpError("INVALID_BODY", "POST /v2/orders: price is required for LIMIT and must be null for MARKET")
        return _accepted(lambda: self._reads().submit(body))

    def orders_cancel(self, query: Query, params: dict[str, str], body: CancelBody) -> Relayed:
        _gates("POST /v2/orders/cancel", body.paper, body.confirmed)
        return _accepted(lambda: self._reads().cancel(body))

    def commands_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        result = self._reads().command(params["id"])
        if result is None:
            raise HttpError("NOT_FOUND", f"no command {params['id'][:64]!r} on this paper node")
        return result

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


def _gates(route: str, paper: bool, confirmed: bool) -> None:
    """The order routes' gates (requires_paper, requires_confirmation), named when missing."""
    missing = [name for name, given in (("paper", paper), ("confirmed", confirmed)) if given is not True]
    if missing:
        raise HttpError(
            "INVALID_BODY",
            f"{route}: {' and '.join(missing)} must be true (orders are paper only and confirmed by the operator)",
        )


def _accepted(place: Callable[[], dict[str, Any]]) -> Relayed:
    try:
        return Relayed(202, _encode(place()))
    except OrderRefused as refused:
        raise HttpError(refused.symbol, refused.text) from None


def _items(items: list[dict[str, Any]], cursor: str | None) -> dict[str, Any]:
    return {"items": items, "next_cursor": cursor}
