"""POST bodies: the three checks in order (strict JSON text, sealed keys, typed values), each
with its own refusal, and the OpenAPI schemas generated from the same Structs."""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator

from spine.http.bodies import SearchBody, SelectionBody, body_schemas, decode_body
from spine.http.errors import HttpError

ROUTE = "POST /v2/instruments/search"


def refusal(raw: bytes, kind: type[SearchBody] | type[SelectionBody] = SearchBody) -> HttpError:
    with pytest.raises(HttpError) as refused:
        decode_body(ROUTE, raw, kind)
    assert refused.value.text.startswith(ROUTE + ": ")
    return refused.value


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        (b"", "INVALID_JSON"),
        (b"{", "INVALID_JSON"),
        (b'{"text": "a", "limit": 5.0}', "FLOAT_REFUSED: at $.limit"),
        (b'{"text": "a", "limit": 1e2}', "FLOAT_REFUSED"),
        (b'{"text": "a", "text": "b"}', "DUPLICATE_KEY"),
        (b'{"text": "a", "limit": 99999999999999999999}', "INTEGER_OUT_OF_RANGE"),
        (b'{"text": "\xff"}', "INVALID_UTF8"),
        (b'["text"]', "must be a JSON object"),
        (b'"text"', "must be a JSON object"),
        (b'{"text": ""}', "$.text"),
        (b'{"text": "' + b"x" * 65 + b'"}', "$.text"),
        (b'{"text": 7}', "Expected `str`"),
        (b'{"text": "a", "limit": 0}', "$.limit"),
        (b'{"text": "a", "limit": 1001}', "$.limit"),
        (b'{"text": "a", "limit": true}', "Expected `int`"),
        (b'{"text": "a", "limit": "5"}', "Expected `int`"),
        (b'{"text": "a", "instrument_classes": []}', "$.instrument_classes"),
        (b'{"text": "a", "instrument_classes": ["CRYPTO"]}', "$.instrument_classes[0]"),
        (b'{"limit": 5}', "missing required field `text`"),
    ],
)
def test_bad_search_bodies_are_invalid_body_naming_what(raw: bytes, words: str) -> None:
    error = refusal(raw)
    assert error.symbol == "INVALID_BODY" and error.status == 400
    assert words in error.text, error.text


def test_unknown_keys_are_named_with_the_route_and_the_allowed_keys() -> None:
    error = refusal(b'{"text": "a", "colour": 1, "Limit": 2}')
    assert error.symbol == "UNKNOWN_BODY_KEYS"
    assert error.text == f"{ROUTE}: unknown keys Limit, colour; allowed keys: text, instrument_classes, limit"


def test_a_search_body_takes_its_defaults() -> None:
    body = decode_body(ROUTE, b'{"text": "btc"}', SearchBody)
    assert (body.text, body.instrument_classes, body.limit) == ("btc", None, 100)
    body = decode_body(ROUTE, b'{"text": "b", "instrument_classes": null, "limit": 1000}', SearchBody)
    assert (body.instrument_classes, body.limit) == (None, 1000)


@pytest.mark.parametrize(
    ("ids", "ok"),
    [
        (["BTCUSDT.SIM"], True),
        (["BTCUSDT.SIM"] * 3, True),
        (["A.SIM"] * 1000, True),
        ([], False),
        (["A.SIM"] * 1001, False),
        (["btcusdt.sim"], False),
        (["BTCUSDT"], False),
        (["BTCUSDT.SIM\n"], False),
        (["A" * 125 + ".SIM"], False),
        ([1], False),
        ("BTCUSDT.SIM", False),
    ],
)
def test_selection_bodies_hold_1_to_1000_canonical_ids(ids: object, ok: bool) -> None:
    raw = json.dumps({"instrument_ids": ids}).encode()
    if ok:
        assert decode_body(ROUTE, raw, SelectionBody).instrument_ids == ids
    else:
        assert refusal(raw, SelectionBody).symbol == "INVALID_BODY"


def test_openapi_body_schemas_are_draft_2020_12_with_ecma_patterns() -> None:
    schemas = body_schemas("#/components/schemas/{name}")
    assert set(schemas) == {
        "BacktestBody",
        "CancelBody",
        "OrderBody",
        "SearchBody",
        "SelectionBody",
        "StudyBody",
        "StudyObjective",
        "StudySampler",
        "Window",
    }
    assert len(schemas["BacktestBody"]["properties"]) == 9  # the spec's sealed nine keys
    for schema in schemas.values():
        Draft202012Validator.check_schema(schema)
        assert schema["additionalProperties"] is False
    item = schemas["SelectionBody"]["properties"]["instrument_ids"]["items"]
    assert item["pattern"] == "^[!-~]+\\.[A-Z][A-Z0-9_]*$"
    assert Draft202012Validator(schemas["SearchBody"]).is_valid({"text": "btc", "limit": 5})
    assert not Draft202012Validator(schemas["SearchBody"]).is_valid({"text": "btc", "extra": 1})
