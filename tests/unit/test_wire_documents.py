"""The schemas are the contract: each refuses what the wire must never carry (unknown fields,
bad decimals, floats, bad timestamps, a wrong schema tag), and every fact kind's frame
validates under its own payload only.

Validation uses jsonschema's plain Draft202012Validator (pinned decision 8).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import referencing
from jsonschema import Draft202012Validator
from referencing.jsonschema import DRAFT202012

from spine.schemas import all_schemas

EXAMPLES = Path(__file__).resolve().parents[2] / "tests" / "data" / "wire_examples"
SCHEMAS = {schema_id: schema for (schema_id, _), schema in all_schemas().items()}
REGISTRY: referencing.Registry[Any] = referencing.Registry().with_resources(
    (schema["$id"], DRAFT202012.create_resource(schema)) for schema in SCHEMAS.values()
)
IID, TS = "BTCUSDT-PERP.SIM", "1700000220000000000"


def validator(schema_id: str) -> Draft202012Validator:
    return Draft202012Validator(SCHEMAS[schema_id], registry=REGISTRY)


def example_bytes(schema_id: str) -> bytes:
    return (EXAMPLES / f"{schema_id}.json").read_bytes()


def _first_nested_object(node: object) -> dict[str, Any] | None:
    children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else []
    for child in children:
        if isinstance(child, dict):
            return child
        found = _first_nested_object(child)
        if found is not None:
            return found
    return None


@pytest.mark.parametrize("schema_id", sorted(SCHEMAS))
def test_unknown_fields_are_refused(schema_id: str) -> None:
    top = json.loads(example_bytes(schema_id))
    nested = json.loads(example_bytes(schema_id))
    inner = _first_nested_object(nested)
    top["unexpected"] = "1"
    if inner is not None:  # flat documents (ticks, instrument_ref) have no nested object
        inner["unexpected"] = "1"
    for document in (top, nested) if inner is not None else (top,):
        assert not validator(schema_id).is_valid(document)


@pytest.mark.parametrize("bad", ["-0", "-0.00", "1e5", "01", 36960.5])
def test_a_bad_decimal_is_refused(bad: object) -> None:
    tick = json.loads(example_bytes("svc.quote_tick"))
    tick["bid_price"] = bad
    assert not validator("svc.quote_tick").is_valid(tick)


@pytest.mark.parametrize("bad", ["01", "-1", 1700000220000000000, "123456789012345678901"])
def test_a_bad_timestamp_is_refused(bad: object) -> None:
    tick = json.loads(example_bytes("svc.trade_tick"))
    tick["ts_event"] = bad
    assert not validator("svc.trade_tick").is_valid(tick)


def test_a_wrong_schema_tag_is_refused() -> None:
    tick = json.loads(example_bytes("svc.trade_tick"))
    tick["schema_id"] = "svc.quote_tick"
    assert not validator("svc.trade_tick").is_valid(tick)


def frame(kind: str, payload: dict[str, Any], instrument_id: str = IID) -> dict[str, Any]:
    return {
        "version": "spine.v2",
        "schema_id": "svc.projection_frame",
        "schema_version": 1,
        "kind": kind,
        "instrument_id": instrument_id,
        "ts_event": TS,
        "ts_init": TS,
        "payload": payload,
    }


FRAMES = [
    frame("mark_price", {"value": "37012.5"}),
    frame("index_price", {"value": "37010"}),
    frame("funding_rate", {"rate": "0.0001", "next_funding_ts": None}),
    frame(
        "option_greeks",
        {
            "delta": "0.42",
            "gamma": "0.00003",
            "vega": "55.1",
            "theta": "-21.7",
            "rho": "3.2",
            "iv": "0.55",
            "underlying_price": "37000",
        },
        "BTC-29DEC23-40000-C.SIM",
    ),
    frame("instrument_status", {"action": "HALT", "reason": "circuit breaker", "is_trading": False}),
    frame("liquidation", {"side": "SELL", "price": "36500", "quantity": "2.5"}),
]


@pytest.mark.parametrize("document", FRAMES, ids=lambda f: f["kind"])
def test_every_frame_kind_validates_alone_and_in_a_facts_page(document: dict[str, Any]) -> None:
    assert list(validator("svc.projection_frame").iter_errors(document)) == []
    page = {
        "version": "spine.v2",
        "schema_id": "svc.facts_page",
        "schema_version": 1,
        "kind": document["kind"],
        "items": [document],
        "next_cursor": None,
    }
    assert list(validator("svc.facts_page").iter_errors(page)) == []


def test_a_frame_with_another_kinds_payload_is_refused() -> None:
    assert not validator("svc.projection_frame").is_valid({**FRAMES[0], "kind": "funding_rate"})
