"""The msgspec Structs agree with the schemas: what a Struct encodes validates, and the
schema refuses what the Struct refuses (unknown fields, bad decimals, floats).

Validation uses jsonschema's plain Draft202012Validator (pinned decision 8).
"""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any

import msgspec
import pytest
import referencing
from jsonschema import Draft202012Validator
from referencing.jsonschema import DRAFT202012

from spine.schemas import all_schemas
from spine.wire import documents as d
from spine.wire import node_documents as n
from spine.wire.documents import DOCUMENT_TYPES

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


def variants(tp: Any) -> tuple[type[msgspec.Struct], ...]:
    return typing.get_args(tp) or (tp,)


def test_every_schema_has_a_struct() -> None:
    assert set(DOCUMENT_TYPES) == set(SCHEMAS)


@pytest.mark.parametrize("schema_id", sorted(SCHEMAS))
def test_example_round_trips_through_the_struct_and_validates(schema_id: str) -> None:
    instance = msgspec.json.decode(example_bytes(schema_id), type=DOCUMENT_TYPES[schema_id])
    encoded = json.loads(msgspec.json.encode(instance))
    assert encoded == json.loads(example_bytes(schema_id))
    assert list(validator(schema_id).iter_errors(encoded)) == []


@pytest.mark.parametrize("schema_id", sorted(SCHEMAS))
def test_struct_fields_are_the_schema_properties(schema_id: str) -> None:
    properties = set(SCHEMAS[schema_id]["properties"])
    for struct in variants(DOCUMENT_TYPES[schema_id]):
        fields = {field.encode_name for field in msgspec.structs.fields(struct)}
        tag = struct.__struct_config__.tag_field
        expected = properties - {"schema_id", "schema_version"} if schema_id == "svc.error_envelope" else properties
        assert fields | ({tag} if tag else set()) == expected, struct.__name__


def _first_nested_object(node: object) -> dict[str, Any] | None:
    children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else []
    for child in children:
        if isinstance(child, dict):
            return child
        found = _first_nested_object(child)
        if found is not None:
            return found
    return None


KEYED_MAPS = {"svc.feature_row"}


@pytest.mark.parametrize("schema_id", sorted(SCHEMAS))
def test_both_refuse_unknown_fields(schema_id: str) -> None:
    top = json.loads(example_bytes(schema_id))
    nested = json.loads(example_bytes(schema_id))
    inner = _first_nested_object(nested)
    top["unexpected"] = "1"
    if inner is not None:  # flat documents (ticks, instrument_ref) have no nested object
        inner["unexpected"] = "1"
    for document in (top, nested) if inner is not None else (top,):
        # A map with patterned keys (a feature row's `values`) refuses the key, not a field.
        keyed = document is nested and schema_id in KEYED_MAPS
        refusal = r"matching regex .* - at `key` in `\$.values`" if keyed else "unknown field `unexpected`"
        with pytest.raises(msgspec.ValidationError, match=refusal):
            msgspec.json.decode(json.dumps(document), type=DOCUMENT_TYPES[schema_id])
        assert not validator(schema_id).is_valid(document)


@pytest.mark.parametrize("bad", ["-0", "-0.00", "1e5", "01", 36960.5, "1\n"])
def test_both_refuse_a_bad_decimal(bad: object) -> None:
    tick = json.loads(example_bytes("svc.quote_tick"))
    tick["bid_price"] = bad
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(json.dumps(tick), type=d.QuoteTick)
    if bad != "1\n":  # plain Python regexes accept a trailing newline; see test_schemas
        assert not validator("svc.quote_tick").is_valid(tick)


@pytest.mark.parametrize("bad", ["01", "-1", 1700000220000000000, "123456789012345678901"])
def test_both_refuse_a_bad_timestamp(bad: object) -> None:
    tick = json.loads(example_bytes("svc.trade_tick"))
    tick["ts_event"] = bad
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(json.dumps(tick), type=d.TradeTick)
    assert not validator("svc.trade_tick").is_valid(tick)


def test_both_refuse_a_wrong_schema_tag() -> None:
    tick = json.loads(example_bytes("svc.trade_tick"))
    tick["schema_id"] = "svc.quote_tick"
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(json.dumps(tick), type=d.TradeTick)
    assert not validator("svc.trade_tick").is_valid(tick)


FRAMES: list[msgspec.Struct] = [
    d.MarkPriceFrame(instrument_id=IID, ts_event=TS, ts_init=TS, payload=d.PricePayload(value="37012.5")),
    d.IndexPriceFrame(instrument_id=IID, ts_event=TS, ts_init=TS, payload=d.PricePayload(value="37010")),
    d.FundingRateFrame(instrument_id=IID, ts_event=TS, ts_init=TS,
                       payload=d.FundingRatePayload(rate="0.0001", next_funding_ts=None)),
    d.OptionGreeksFrame(
        instrument_id="BTC-29DEC23-40000-C.SIM", ts_event=TS, ts_init=TS,
        payload=d.OptionGreeksPayload(delta="0.42", gamma="0.00003", vega="55.1", theta="-21.7", rho="3.2",
                                      iv="0.55", underlying_price="37000"),
    ),
    d.InstrumentStatusFrame(
        instrument_id=IID, ts_event=TS, ts_init=TS,
        payload=d.InstrumentStatusPayload(action="HALT", reason="circuit breaker", is_trading=False),
    ),
    d.LiquidationFrame(instrument_id=IID, ts_event=TS, ts_init=TS,
                       payload=d.LiquidationPayload(side="SELL", price="36500", quantity="2.5")),
]


@pytest.mark.parametrize("frame", FRAMES, ids=lambda f: type(f).__name__)
def test_every_frame_kind_encodes_valid_and_decodes_to_its_struct(frame: msgspec.Struct) -> None:
    encoded = msgspec.json.encode(frame)
    assert list(validator("svc.projection_frame").iter_errors(json.loads(encoded))) == []
    assert type(msgspec.json.decode(encoded, type=d.ProjectionFrame)) is type(frame)
    page = d.FactsPage(kind=json.loads(encoded)["kind"], items=[frame], next_cursor=None)  # type: ignore[list-item]
    assert validator("svc.facts_page").is_valid(json.loads(msgspec.json.encode(page)))


def test_a_frame_with_another_kinds_payload_is_refused_by_both() -> None:
    frame = json.loads(msgspec.json.encode(FRAMES[0]))
    frame["kind"] = "funding_rate"
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(json.dumps(frame), type=d.ProjectionFrame)
    assert not validator("svc.projection_frame").is_valid(frame)


def test_constructed_documents_validate() -> None:
    coverage = d.SeriesCoverage(
        instrument_id=IID, channel="INTERNAL", retention_state="unmanaged", exhausted=False,
        history_terminal=False, sparse_ok=True, bar_count=0, observed=[], gaps=[], newest_close=None,
        resume_from=None,
    )
    page = d.BarEnvelope(
        instrument_id=IID, bar_type=f"{IID}-1-MINUTE-LAST-INTERNAL", resolution="1m", channel="INTERNAL",
        bars=[], coverage=coverage, withheld=[], next_cursor=None,
    )
    health = n.Health(ready=False, degraded=True, degraded_reasons=["NOT_HYDRATED"], engine_status=None, ts_event=TS)
    error = d.ErrorEnvelope(error=d.ErrorDetail(code=40401, detail="NOT_FOUND: no such bar series"))
    for schema_id, document in [("svc.bar_envelope", page), ("svc.health", health), ("svc.error_envelope", error)]:
        assert list(validator(schema_id).iter_errors(json.loads(msgspec.json.encode(document)))) == []
