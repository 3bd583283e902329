"""The v1 documents (schemas/v1/): valid draft 2020-12, named for their files, tagged
``spine.v1``, every ``$ref`` resolving (into the v2 set where they embed its documents), and
kept out of the v2 schema set and its digest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from reference.wire_validator import _validators
from spine.schemas import schema_set

V1 = Path(__file__).resolve().parents[2] / "schemas" / "v1"
FILES = sorted(V1.glob("*.json"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_each_v1_schema_is_valid_and_named_for_its_file(path: Path) -> None:
    schema = json.loads(path.read_bytes())
    Draft202012Validator.check_schema(schema)
    assert schema["$id"] == f"https://schemas.spine.invalid/v1/{path.name}"
    assert schema["properties"]["schema_id"]["const"] == path.name.removesuffix(".json")
    assert schema["properties"]["version"] == {"const": "spine.v1"}


def test_every_v1_ref_resolves() -> None:
    validators = _validators()
    for path in FILES:
        schema_id = path.name.removesuffix(".json")
        resolver = validators[schema_id]._resolver
        for ref in _refs(json.loads(path.read_bytes())):
            resolver.lookup(ref)


def test_v1_documents_stay_out_of_the_v2_set() -> None:
    assert not any(sid.startswith("v1.") for sid, _ in schema_set().schemas)


def _refs(node: object) -> list[str]:
    if isinstance(node, dict):
        return ([node["$ref"]] if "$ref" in node else []) + [r for v in node.values() for r in _refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []
