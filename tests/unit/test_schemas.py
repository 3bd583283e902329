"""The schema set: well-formed draft 2020-12 files, the registry, the digest, the loader.

Checks use jsonschema's plain Draft202012Validator and a referencing registry built here
from the files, independent of the code in spine.schemas (pinned decision 8).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import referencing
from jsonschema import Draft202012Validator
from referencing.jsonschema import DRAFT202012

from spine import schemas
from spine.errors import SpineError

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_DIR = ROOT / "schemas"
EXAMPLES = ROOT / "tests" / "data" / "wire_examples"
FILES = sorted(SCHEMA_DIR.glob("*.json"), key=lambda p: p.name)
LOADED = {path.name: json.loads(path.read_bytes()) for path in FILES}
TAGS = ("version", "schema_id", "schema_version")
# Integers are allowed only for counters, sequences, codes, scales, schema_version and the
# confluence vote's small integers (a vote is +1, -1 or 0 by the spec; the sums and the
# number of timeframes voting are bounded by 7).
INTEGER_PLACES = {"count", "code", "schema_version", "price_precision", "size_precision", "scale", "vote", "trend",
                  "momentum", "voting"}


def _registry() -> referencing.Registry[Any]:
    return referencing.Registry().with_resources(
        (schema["$id"], DRAFT202012.create_resource(schema)) for schema in LOADED.values()
    )


def _walk(node: object, where: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(node, dict):
        yield where, node
        for key, value in node.items():
            yield from _walk(value, key)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value, where)


def test_the_package_ships_exactly_the_top_level_schemas() -> None:
    """Editable installs link to schemas/, wheels copy it: either way, the same bytes."""
    shipped = {p.name: p.read_bytes() for p in schemas.SCHEMA_DIR.glob("*.json")}
    assert FILES
    assert shipped == {p.name: p.read_bytes() for p in FILES}


@pytest.mark.parametrize("name", list(LOADED))
def test_every_schema_is_valid_draft_2020_12(name: str) -> None:
    schema = LOADED[name]
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == f"https://schemas.spine.invalid/{name}"
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert schema["title"] and schema["description"]


@pytest.mark.parametrize("name", list(LOADED))
def test_constants_name_the_file_and_are_typed(name: str) -> None:
    props = LOADED[name]["properties"]
    schema_id, schema_version = props["schema_id"]["const"], props["schema_version"]["const"]
    assert name == f"{schema_id}.json"
    assert type(schema_version) is int and schema_version >= 1
    assert props["version"] == {"const": "spine.v2"}


@pytest.mark.parametrize("name", list(LOADED))
def test_tags_are_required_except_on_the_error_envelope(name: str) -> None:
    required = set(LOADED[name]["required"])
    if name == "svc.error_envelope.json":
        assert required == {"version", "error"}
    else:
        assert set(TAGS) <= required


def test_ids_are_unique_and_form_the_registry() -> None:
    props = [schema["properties"] for schema in LOADED.values()]
    keys = [(p["schema_id"]["const"], p["schema_version"]["const"]) for p in props]
    assert len(keys) == len(set(keys))
    assert set(schemas.all_schemas()) == set(keys)


def test_digest_is_sha256_over_the_files_in_name_order() -> None:
    expected = hashlib.sha256(b"".join(path.read_bytes() for path in FILES)).hexdigest()
    assert schemas.schema_set_digest() == expected
    assert schemas.schema_set().digest == expected


@pytest.mark.parametrize("name", list(LOADED))
def test_every_ref_resolves(name: str) -> None:
    resolver = _registry().resolver(base_uri=LOADED[name]["$id"])
    refs = [node["$ref"] for _, node in _walk(LOADED[name]) if "$ref" in node]
    for ref in refs:
        assert resolver.lookup(ref).contents is not None, ref


@pytest.mark.parametrize("name", list(LOADED))
def test_no_number_type_and_integers_only_where_allowed(name: str) -> None:
    for where, node in _walk(LOADED[name]):
        types = node.get("type")
        types = types if isinstance(types, list) else [types]
        assert "number" not in types, f"{name}: {where}"
        if "integer" in types:
            assert where in INTEGER_PLACES, f"{name}: integer at {where}"


def test_shared_definitions_do_not_drift() -> None:
    # Small $defs are repeated per file so each file reads alone; copies must stay equal.
    seen: dict[str, tuple[str, object]] = {}
    for name, schema in LOADED.items():
        for key, definition in schema.get("$defs", {}).items():
            first = seen.setdefault(key, (name, definition))
            assert first[1] == definition, f"$defs/{key} differs between {first[0]} and {name}"


@pytest.mark.parametrize("name", list(LOADED))
def test_each_schema_has_a_valid_example(name: str) -> None:
    example = json.loads((EXAMPLES / name).read_text(encoding="utf-8"))
    validator = Draft202012Validator(LOADED[name], registry=_registry())
    assert list(validator.iter_errors(example)) == []
    assert schemas.validator_for(name.removesuffix(".json")).is_valid(example)


def test_no_example_without_a_schema() -> None:
    assert {p.name for p in EXAMPLES.glob("*.json")} == set(LOADED)


# --- validator_for ----------------------------------------------------------------------


def test_validator_for_defaults_to_the_newest_version() -> None:
    validator = schemas.validator_for("svc.quote_tick")
    assert validator.schema is schemas.all_schemas()[("svc.quote_tick", 1)]
    assert schemas.validator_for("svc.quote_tick", 1) is validator


@pytest.mark.parametrize("key", [("svc.nope", None), ("svc.quote_tick", 2)])
def test_validator_for_refuses_unknown_pairs(key: tuple[str, int | None]) -> None:
    with pytest.raises(schemas.UnknownSchemaError, match="UNKNOWN_SCHEMA") as caught:
        schemas.validator_for(*key)
    assert isinstance(caught.value, SpineError) and isinstance(caught.value, LookupError)


def test_validator_uses_ecma_end_anchor_and_refuses_float_integers() -> None:
    tick = json.loads((EXAMPLES / "svc.quote_tick.json").read_text(encoding="utf-8"))
    validator = schemas.validator_for("svc.quote_tick")
    assert validator.is_valid(tick)
    assert not validator.is_valid({**tick, "ts_event": tick["ts_event"] + "\n"})
    assert not validator.is_valid({**tick, "schema_version": 1.0})
    assert not validator.is_valid({**tick, "schema_version": True})
    bars = json.loads((EXAMPLES / "svc.bar_envelope.json").read_text(encoding="utf-8"))
    bars["bars"][0]["sequence"] = 1.0
    assert not schemas.validator_for("svc.bar_envelope").is_valid(bars)


def test_ecma_translation_leaves_escaped_and_class_dollars_alone() -> None:
    assert schemas._ecma_regex(r"^a\$[$]$").pattern == r"^a\$[$]\Z"


# --- loader refusals ----------------------------------------------------------------------


def _copy_set(tmp_path: Path) -> Path:
    for path in FILES:
        shutil.copy(path, tmp_path / path.name)
    return tmp_path


def test_loader_reads_a_copy_with_the_same_digest(tmp_path: Path) -> None:
    loaded = schemas.load_schema_set(_copy_set(tmp_path))
    assert loaded.digest == schemas.schema_set_digest()
    assert dict(loaded.schemas) == dict(schemas.all_schemas())


def _write(path: Path, schema: object) -> None:
    path.write_text(json.dumps(schema), encoding="utf-8")


def _minimal(schema_id: object, schema_version: object, file_name: str) -> dict[str, Any]:
    return {
        "$id": f"https://schemas.spine.invalid/{file_name}",
        "properties": {"schema_id": {"const": schema_id}, "schema_version": {"const": schema_version}},
    }


def test_loader_refuses_an_empty_directory(tmp_path: Path) -> None:
    with pytest.raises(schemas.SchemaSetError, match="no \\*.json files"):
        schemas.load_schema_set(tmp_path)


def test_loader_refuses_text_that_is_not_json(tmp_path: Path) -> None:
    (tmp_path / "svc.x.json").write_text("{", encoding="utf-8")
    with pytest.raises(schemas.SchemaSetError, match="svc.x.json: not JSON"):
        schemas.load_schema_set(tmp_path)


@pytest.mark.parametrize(
    ("schema_id", "schema_version", "missing"),
    [(None, 1, "schema_id"), ("svc.x", None, "schema_version"), ("svc.x", "1", "schema_version"),
     ("svc.x", True, "schema_version"), (7, 1, "schema_id")],
)
def test_loader_refuses_missing_or_mistyped_constants(
    tmp_path: Path, schema_id: object, schema_version: object, missing: str
) -> None:
    _write(tmp_path / "svc.x.json", _minimal(schema_id, schema_version, "svc.x.json"))
    with pytest.raises(schemas.SchemaSetError, match=f"svc.x.json: properties.{missing}.const"):
        schemas.load_schema_set(tmp_path)


def test_loader_refuses_a_document_that_is_not_an_object(tmp_path: Path) -> None:
    _write(tmp_path / "svc.x.json", [1, 2])
    with pytest.raises(schemas.SchemaSetError, match="properties.schema_id.const"):
        schemas.load_schema_set(tmp_path)


def test_loader_refuses_an_id_that_does_not_name_the_file(tmp_path: Path) -> None:
    _write(tmp_path / "svc.x.json", _minimal("svc.x", 1, "svc.y.json"))
    with pytest.raises(schemas.SchemaSetError, match=r"svc.x.json: \$id must be"):
        schemas.load_schema_set(tmp_path)


def test_loader_refuses_duplicate_pairs(tmp_path: Path) -> None:
    _write(tmp_path / "svc.x.json", _minimal("svc.x", 1, "svc.x.json"))
    _write(tmp_path / "svc.x.copy.json", _minimal("svc.x", 1, "svc.x.copy.json"))
    with pytest.raises(schemas.SchemaSetError, match=r"duplicate \('svc.x', 1\)"):
        schemas.load_schema_set(tmp_path)
