"""The client-side decoder: one failing document per step, the order of the steps, and a
valid document per schema passing unchanged."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from spine.errors import SpineError
from spine.schemas import UnknownSchemaError, all_schemas
from spine.wire.decoder import (
    ContractViolation,
    MissingSchemaTag,
    NotAnObject,
    SchemaIdMismatch,
    StructuralViolation,
    UnsupportedSchema,
    UnsupportedWireVersion,
    decode,
    decode_error_body,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "tests" / "data" / "wire_examples"
DOCUMENT_IDS = sorted(sid for sid, _ in all_schemas() if sid != "svc.error_envelope")
STEPS: list[tuple[type[ContractViolation], int, str]] = [
    (NotAnObject, 1, "object shape"),
    (MissingSchemaTag, 2, "schema-tag presence"),
    (UnsupportedSchema, 3, "vendored schema"),
    (SchemaIdMismatch, 4, "schema_id match"),
    (UnsupportedWireVersion, 5, "supported wire version"),
    (StructuralViolation, 6, "structural validation"),
]


def example(schema_id: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((EXAMPLES / f"{schema_id}.json").read_text(encoding="utf-8"))
    return loaded


def tick(**changes: object) -> dict[str, Any]:
    document = example("svc.quote_tick")
    document.update(changes)
    return document


@pytest.mark.parametrize("schema_id", DOCUMENT_IDS)
def test_a_valid_document_passes_unchanged_in_every_input_form(schema_id: str) -> None:
    document = example(schema_id)
    original = copy.deepcopy(document)
    assert decode(document, schema_id) is document
    assert document == original
    text = json.dumps(document)
    assert decode(text, schema_id) == original
    assert decode(text.encode("utf-8"), schema_id) == original


def test_a_valid_error_body_passes() -> None:
    body = example("svc.error_envelope")
    assert decode_error_body(body) is body
    assert decode_error_body(json.dumps(body).encode()) == body


def test_steps_are_distinct_classes_naming_their_step() -> None:
    assert len({cls for cls, _, _ in STEPS}) == 6
    for cls, number, name in STEPS:
        assert issubclass(cls, ContractViolation) and cls.step == number and cls.step_name == name
    assert issubclass(ContractViolation, SpineError) and issubclass(ContractViolation, ValueError)


# One document failing each step (and only the checks after it could also fail).
FAILURES: list[tuple[str, object, type[ContractViolation]]] = [
    ("array", "[1, 2]", NotAnObject),
    ("scalar text", '"svc.quote_tick"', NotAnObject),
    ("not json", "{'version': 'spine.v2'}", NotAnObject),
    ("truncated", b'{"version": "spine.v2"', NotAnObject),
    ("invalid utf-8", b'{"a": "\xff"}', NotAnObject),
    ("float in text", json.dumps(tick(bid_price=1.5)), NotAnObject),
    ("exponent in text", '{"a": 1e5}', NotAnObject),
    ("NaN in text", '{"a": NaN}', NotAnObject),
    ("duplicate key", '{"schema_id": "svc.quote_tick", "schema_id": "svc.trade_tick"}', NotAnObject),
    ("float in dict", tick(bid_price=36960.0), NotAnObject),
    ("non-string key", {1: "x", "schema_id": "svc.quote_tick"}, NotAnObject),
    ("not text or dict", 42, NotAnObject),
    ("list object", [tick()], NotAnObject),
    ("no schema_id", {k: v for k, v in tick().items() if k != "schema_id"}, MissingSchemaTag),
    ("no schema_version", {k: v for k, v in tick().items() if k != "schema_version"}, MissingSchemaTag),
    ("schema_id not a string", tick(schema_id=7), MissingSchemaTag),
    ("schema_version a string", tick(schema_version="1"), MissingSchemaTag),
    ("schema_version a bool", tick(schema_version=True), MissingSchemaTag),
    ("unknown schema id", tick(schema_id="svc.quote_tock"), UnsupportedSchema),
    ("unknown schema version", tick(schema_version=2), UnsupportedSchema),
    ("another document", example("svc.trade_tick"), SchemaIdMismatch),
    ("v1 body", tick(version="spine.v1"), UnsupportedWireVersion),
    ("no version", {k: v for k, v in tick().items() if k != "version"}, UnsupportedWireVersion),
    ("missing field", {k: v for k, v in tick().items() if k != "ask_size"}, StructuralViolation),
    ("unknown field", tick(spread="0.5"), StructuralViolation),
    ("negative zero", tick(bid_size="-0"), StructuralViolation),
    ("timestamp with newline", tick(ts_init="1\n"), StructuralViolation),
]


@pytest.mark.parametrize(("case", "document", "expected"), FAILURES, ids=[f[0] for f in FAILURES])
def test_each_step_rejects_its_document(case: str, document: Any, expected: type[ContractViolation]) -> None:
    with pytest.raises(ContractViolation) as caught:
        decode(document, "svc.quote_tick")
    assert type(caught.value) is expected, case
    assert caught.value.step == expected.step
    assert str(caught.value).startswith(f"CONTRACT_VIOLATION: step {expected.step} ({expected.step_name}): ")


def test_steps_run_in_order() -> None:
    # Each document also fails every later step; the earliest failure is the one raised.
    wrong_everything = tick(schema_version=9, schema_id="svc.trade_tick", version="x", bid_price=1)
    with pytest.raises(UnsupportedSchema):
        decode(wrong_everything, "svc.quote_tick")
    with pytest.raises(SchemaIdMismatch):
        decode(tick(version="x", bid_price=1), "svc.trade_tick")
    with pytest.raises(UnsupportedWireVersion):
        decode(tick(version="x", bid_price=1), "svc.quote_tick")
    with pytest.raises(MissingSchemaTag):
        decode({"version": "x", "schema_id": "svc.nope"}, "svc.quote_tick")


def test_structural_message_names_the_path() -> None:
    with pytest.raises(StructuralViolation, match=r"at \$\.bars\[0\]\.close"):
        bars = example("svc.bar_envelope")
        bars["bars"][0]["close"] = "1e3"
        decode(bars, "svc.bar_envelope")


def test_an_error_body_is_not_a_document() -> None:
    with pytest.raises(MissingSchemaTag, match="use decode_error_body"):
        decode(example("svc.error_envelope"), "svc.bar_envelope")


def test_an_unknown_expected_schema_is_a_caller_error() -> None:
    with pytest.raises(UnknownSchemaError, match="UNKNOWN_SCHEMA"):
        decode(tick(), "svc.nope")


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("[]", NotAnObject),
        ('{"version": "spine.v2", "error": {"code": 1.0, "detail": "X: y"}}', NotAnObject),
        ({"version": "spine.v1", "error": {"code": 40401, "detail": "NOT_FOUND: x"}}, UnsupportedWireVersion),
        ({"version": "spine.v2", "error": {"code": 40401, "detail": "not found"}}, StructuralViolation),
        (
            {"version": "spine.v2", "error": {"code": 40401, "detail": "NOT_FOUND: x", "trace": "..."}},
            StructuralViolation,
        ),
        ({"version": "spine.v2"}, StructuralViolation),
    ],
)
def test_error_body_failures(body: Any, expected: type[ContractViolation]) -> None:
    with pytest.raises(ContractViolation) as caught:
        decode_error_body(body)
    assert type(caught.value) is expected


# --- feature documents: a delta operation outside UPSERT/RETIRE is surfaced, and a closed union's
# refusal names the variant's own defect (not another variant's discriminator) ------------------


def delta(*operations: object) -> dict[str, Any]:
    return {**example("svc.feature_row_delta"), "operations": list(operations)}


def row(value: object) -> dict[str, Any]:
    return {**example("svc.feature_row"), "values": {"rsi_14.value": value}}


@pytest.mark.parametrize("form", ["dict", "str", "bytes"])
def test_a_correct_operation_is_a_contract_violation_naming_the_op(form: str) -> None:
    document: Any = delta({"op": "CORRECT", "key": "rsi_14.value", "value": {"kind": "INTEGER", "value": "1"}})
    if form != "dict":
        document = json.dumps(document)
        document = document.encode() if form == "bytes" else document
    with pytest.raises(StructuralViolation) as caught:
        decode(document, "svc.feature_row_delta")
    message = str(caught.value)
    assert "$.operations[0].op" in message and "'CORRECT'" in message
    assert "'UPSERT'" in message and "'RETIRE'" in message


@pytest.mark.parametrize(
    ("document", "schema_id", "path", "says"),
    [
        (
            delta({"op": "UPSERT", "key": "rsi_14.value"}),
            "svc.feature_row_delta",
            "$.operations[0]",
            "'value' is a required property",
        ),
        (
            delta({"op": "RETIRE", "key": "rsi_14.value", "value": {"kind": "INTEGER", "value": "1"}}),
            "svc.feature_row_delta",
            "$.operations[0]",
            "'value' was unexpected",
        ),
        (delta({"key": "rsi_14.value"}), "svc.feature_row_delta", "$.operations[0]", "'op' is missing"),
        (
            row({"kind": "DECIMAL", "value": "1.5"}),
            "svc.feature_row",
            "$.values['rsi_14.value']",
            "'scale' is a required property",
        ),
        (
            row({"kind": "ABSENT", "reason": "WARMING_UP"}),
            "svc.feature_row",
            "$.values['rsi_14.value']",
            "'bars_seen' is a required property",
        ),
        (
            row({"kind": "ZERO"}),
            "svc.feature_row",
            "$.values['rsi_14.value'].kind",
            "'ZERO' is not one of 'DECIMAL', 'INTEGER', 'UNIX_NANOS', 'ABSENT'",
        ),
        (row(None), "svc.feature_row", "$.values['rsi_14.value']", "None is not an object"),
        (row(0), "svc.feature_row", "$.values['rsi_14.value']", "0 is not an object"),
    ],
)
def test_a_closed_union_refusal_names_the_chosen_variants_defect(
    document: dict[str, Any], schema_id: str, path: str, says: str
) -> None:
    with pytest.raises(StructuralViolation) as caught:
        decode(document, schema_id)
    message = str(caught.value)
    assert f"at {path}: " in message and says in message, message
    assert "'RETIRE' was expected" not in message and "'UPSERT' was expected" not in message


@pytest.mark.parametrize("wrap", [bytearray, memoryview])
def test_bytes_like_json_text_is_decoded_like_bytes(wrap: Any) -> None:
    text = json.dumps(tick()).encode("utf-8")
    assert decode(wrap(text), "svc.quote_tick") == tick()
    with pytest.raises(NotAnObject, match="not an object"):
        decode(wrap(b"[1]"), "svc.quote_tick")
