"""``/v2/facts`` and ``/v2/data/{kind}`` before and after discovery: a kind outside the route's
list is never served, so it is 404 ``UNKNOWN_KIND`` at once (never the 503 that tells a client
to retry); a listed kind waits for discovery (503 ``NOT_READY``), then is 404 unless some
discovered instrument carries it."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from spine.http.errors import HttpError
from spine.http.request import Query
from spine.node.reads import MarketHandlers


def handlers(registered: bool, kinds: frozenset[str] = frozenset()) -> MarketHandlers:
    node: Any = SimpleNamespace(
        discovery_registered=lambda: registered, fact_kinds=lambda: kinds, facts=lambda kind: {}
    )
    return MarketHandlers(node)


def refusal(call: Any) -> str:
    with pytest.raises(HttpError) as error:
        call()
    return error.value.symbol


@pytest.mark.parametrize("kind", ["option_greeks", "instrument_status", "volume", ""])
def test_a_kind_facts_never_serves_is_404_before_discovery(kind: str) -> None:
    query = Query(f"kind={kind}", ("kind", "cursor", "limit"))
    assert refusal(lambda: handlers(False).facts_list(query, {})) == "UNKNOWN_KIND"


@pytest.mark.parametrize("kind", ["liquidation", "volume"])
def test_a_kind_data_never_serves_is_404_before_discovery(kind: str) -> None:
    assert refusal(lambda: handlers(False).data_list(Query("", ("cursor", "limit")), {"kind": kind})) == "UNKNOWN_KIND"


def test_a_listed_kind_waits_for_discovery_then_needs_an_instrument_carrying_it() -> None:
    query = Query("kind=mark_price", ("kind", "cursor", "limit"))
    assert refusal(lambda: handlers(False).facts_list(query, {})) == "NOT_READY"
    assert refusal(lambda: handlers(True, frozenset({"index_price"})).facts_list(query, {})) == "UNKNOWN_KIND"
    page = handlers(True, frozenset({"mark_price"})).facts_list(query, {})
    assert (page["kind"], page["items"], page["next_cursor"]) == ("mark_price", [], None)
