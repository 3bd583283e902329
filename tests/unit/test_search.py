"""Instrument search: the ranking against a plain-Python reference (examples and properties),
and the search handlers in-process over the simulated venue's real instruments (normalised
query, search ids, the kept results)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference.canonical_json import identity as reference_identity
from reference.search_rank import search as reference_search
from reference.wire_validator import validate
from spine.http.bodies import SearchBody
from spine.http.errors import HttpError
from spine.http.request import Query
from spine.node.search import KEPT, SearchHandlers, rank
from spine.node.sim.universe import make_instruments
from spine.wire.projection import instrument_doc

CLASSES = ("SPOT", "SWAP", "OPTION")


def doc(
    iid: str,
    cls: str = "SPOT",
    base: str | None = None,
    quote: str = "USDT",
    settlement: str = "USDT",
    underlying: str | None = None,
) -> dict[str, Any]:
    symbol = iid.rsplit(".", 1)[0]
    return {
        "instrument_id": iid,
        "symbol": symbol,
        "instrument_class": cls,
        "base_currency": base,
        "quote_currency": quote,
        "settlement_currency": settlement,
        "underlying": underlying,
    }


UNIVERSE = [
    doc("ETHUSDT.SIM", base="ETH"),
    doc("ETHUSDT-PERP.SIM", "SWAP", base="ETH"),
    doc("BTCUSDT.SIM", base="BTC"),
    doc("XETH.SIM", base="XETH"),
    doc("BTC-E1-60000-C.SIM", "OPTION", underlying="BTC"),
    doc("SOLBTC.SIM", base="SOL", quote="BTC"),
]


def ids(docs: list[dict[str, Any]]) -> list[str]:
    return [d["instrument_id"] for d in docs]


@pytest.mark.parametrize(
    ("text", "classes", "expected"),
    [
        # the exact symbol first, then the symbol that starts with the text
        ("ethusdt", None, ["ETHUSDT.SIM", "ETHUSDT-PERP.SIM"]),
        # no exact symbol: two prefixes (ties by id), then XETH, which holds the text inside
        ("ETH", None, ["ETHUSDT-PERP.SIM", "ETHUSDT.SIM", "XETH.SIM"]),
        # BTC: prefix of three symbols and of SOLBTC's quote currency; ties by instrument id
        ("btc", None, ["BTC-E1-60000-C.SIM", "BTCUSDT.SIM", "SOLBTC.SIM"]),
        ("btc", ["OPTION"], ["BTC-E1-60000-C.SIM"]),
        ("usdt", ["SWAP", "OPTION"], ["BTC-E1-60000-C.SIM", "ETHUSDT-PERP.SIM"]),
        ("-perp", None, ["ETHUSDT-PERP.SIM"]),
        ("nothing", None, []),
    ],
)
def test_ranking_examples(text: str, classes: list[str] | None, expected: list[str]) -> None:
    assert ids(rank(UNIVERSE, text, classes)) == expected
    assert ids(reference_search(UNIVERSE, text, classes)) == expected


_TEXT = st.text(alphabet="abAB-é1", min_size=1, max_size=3)
_FIELD = st.text(alphabet="abAB-é1", min_size=0, max_size=5)


@st.composite
def universes(draw: st.DrawFn) -> list[dict[str, Any]]:
    symbols = draw(st.lists(st.text(alphabet="abAB-é1", min_size=1, max_size=6), max_size=12, unique=True))
    return [
        doc(
            f"{s}.SIM",
            draw(st.sampled_from(CLASSES)),
            base=draw(st.none() | _FIELD),
            quote=draw(_FIELD),
            settlement=draw(_FIELD),
            underlying=draw(st.none() | _FIELD),
        )
        for s in symbols
    ]


@given(universe=universes(), text=_TEXT, classes=st.none() | st.lists(st.sampled_from(CLASSES), min_size=1))
def test_ranking_agrees_with_the_reference(
    universe: list[dict[str, Any]], text: str, classes: list[str] | None
) -> None:
    assert rank(universe, text, classes) == reference_search(universe, text, classes)


# the handlers over the simulated venue's instruments


def handlers(run_id: str = "node-1-1") -> SearchHandlers:
    docs = sorted((instrument_doc(i) for i in make_instruments()), key=lambda d: d["instrument_id"])
    node: Any = SimpleNamespace(run_id=run_id, instrument_docs=lambda: docs)
    return SearchHandlers(node)


def search(h: SearchHandlers, **body: Any) -> dict[str, Any]:
    return h.instruments_search(Query("", ()), {}, SearchBody(**body))


def test_a_search_answers_a_valid_result_with_its_normalised_query() -> None:
    result = search(handlers(), text="eth", instrument_classes=["SWAP", "SPOT", "SWAP"], limit=1)
    validate(result, "svc.search_result")
    assert result["query"] == {
        "version": "spine.v2",
        "schema_id": "svc.search_query",
        "schema_version": 1,
        "text": "eth",
        "instrument_classes": ["SPOT", "SWAP"],
        "limit": 1,
    }
    assert ids(result["items"]) == ["ETHUSDT-PERP.SIM"] and result["total"] == 2
    default = search(handlers(), text="usdt")
    assert default["query"]["instrument_classes"] is None and default["query"]["limit"] == 100
    assert default["total"] == len(default["items"]) == 48


def test_the_search_id_is_the_identity_of_the_query_and_the_run() -> None:
    h = handlers("node-1-7")
    first, again = search(h, text="BTC"), search(h, text="BTC")
    assert first["search_id"] == again["search_id"]
    assert first["search_id"] == reference_identity("search_id", {"query": first["query"], "run_id": "node-1-7"})
    assert search(handlers("node-1-8"), text="BTC")["search_id"] != first["search_id"]
    assert search(h, text="btc")["search_id"] != first["search_id"]  # the text is kept as typed


def test_kept_results_are_served_by_id_and_the_oldest_is_forgotten() -> None:
    h = handlers()
    first = search(h, text="a")
    assert h.instruments_search_result(Query("", ()), {"id": first["search_id"]}) == first
    for k in range(KEPT):
        search(h, text=f"q{k}")
    with pytest.raises(HttpError) as missing:
        h.instruments_search_result(Query("", ()), {"id": first["search_id"]})
    assert missing.value.symbol == "NOT_FOUND" and len(h.kept) == KEPT


@pytest.mark.parametrize("bad", ["abc", "A" * 64, "0" * 63, "0" * 65, "g" * 64])
def test_a_malformed_search_id_is_an_invalid_parameter(bad: str) -> None:
    with pytest.raises(HttpError) as refused:
        handlers().instruments_search_result(Query("", ()), {"id": bad})
    assert refused.value.symbol == "INVALID_PARAMETER"
