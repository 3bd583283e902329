"""The schema sets: the spec's 58 in schemas/ and our own in schemas/own/; well-formed draft
2020-12 files, the registry, the two digests, the loader.

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
OWN_DIR = SCHEMA_DIR / "own"
EXAMPLES = ROOT / "tests" / "data" / "wire_examples"
FILES = sorted(SCHEMA_DIR.glob("*.json"), key=lambda p: p.name)
OWN_FILES = sorted(OWN_DIR.glob("*.json"), key=lambda p: p.name)
LOADED = {path.name: json.loads(path.read_bytes()) for path in [*FILES, *OWN_FILES]}
OWN = {path.name for path in OWN_FILES}
# The spec's "Schema set": 49 venue-neutral names, and the 9 integration-specific documents
# under our names (docs/contract.md, "Schema set").
SPEC_NAMES = {
    "svc.account_state_summary",
    "svc.backtest_job_detail",
    "svc.backtest_job_event",
    "svc.backtest_job_summary",
    "svc.backtest_run_result",
    "svc.bar_envelope",
    "svc.capability_registry",
    "svc.chart_marker",
    "svc.condition_registry",
    "svc.engine_command",
    "svc.engine_status",
    "svc.execution_config",
    "svc.execution_report_page",
    "svc.feature_row",
    "svc.feature_row_delta",
    "svc.feature_spec",
    "svc.feature_state",
    "svc.fill_summary",
    "svc.instrument_ref",
    "svc.integration_capability",
    "svc.optuna_study",
    "svc.optuna_trial",
    "svc.order_summary",
    "svc.pattern_observation",
    "svc.position_summary",
    "svc.projection_frame",
    "svc.quote_tick",
    "svc.run_receipt",
    "svc.sandbox_start_request",
    "svc.sandbox_status",
    "svc.screen_definition",
    "svc.screen_result",
    "svc.screener_health",
    "svc.screener_row",
    "svc.screener_snapshot",
    "svc.series_coverage",
    "svc.signal_event",
    "svc.signal_retirement",
    "svc.strategy_authoring_registry",
    "svc.strategy_file",
    "svc.strategy_file_put_request",
    "svc.strategy_mutation_conflict",
    "svc.strategy_project",
    "svc.strategy_revision",
    "svc.strategy_revision_save_request",
    "svc.strategy_summary",
    "svc.strategy_template",
    "svc.trade_tick",
    "svc.validation_receipt",
}
INTEGRATION_NAMES = {
    "svc.cancel_command",
    "svc.command_result",
    "svc.connection_state",
    "svc.instrument_ref_additions",
    "svc.order_command",
    "svc.search_query",
    "svc.search_result",
    "svc.selection_row",
    "svc.trading_session",
}
# Spec, "Versioning" 4.
AT_VERSION_2 = {
    "svc.backtest_job_detail",
    "svc.fill_summary",
    "svc.order_summary",
    "svc.position_summary",
    "svc.run_receipt",
    "svc.strategy_revision",
    "svc.strategy_revision_save_request",
    "svc.validation_receipt",
}
TAGS = ("version", "schema_id", "schema_version")
# Integers are allowed only for counters, sequences, codes, scales, schema_version and the
# confluence vote's small integers (a vote is +1, -1 or 0 by the spec; the sums and the
# number of timeframes voting are bounded by 7), and a backtest's annualisation (252 or 365 days).
INTEGER_PLACES = {
    "count",
    "code",
    "schema_version",
    "price_precision",
    "size_precision",
    "scale",
    "vote",
    "trend",
    "momentum",
    "voting",
    "trading_days_per_year",
}


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


def test_the_package_ships_exactly_both_sets() -> None:
    """Editable installs link to schemas/, wheels copy it: either way, the same bytes."""
    shipped = {p.name: p.read_bytes() for p in schemas.SCHEMA_DIR.glob("*.json")}
    assert FILES and OWN_FILES
    assert shipped == {p.name: p.read_bytes() for p in FILES}
    shipped_own = {p.name: p.read_bytes() for p in schemas.OWN_SCHEMA_DIR.glob("*.json")}
    assert shipped_own == {p.name: p.read_bytes() for p in OWN_FILES}


def test_the_spec_set_is_exactly_the_58_the_spec_names() -> None:
    assert len(SPEC_NAMES) == 49 and len(INTEGRATION_NAMES) == 9
    assert {path.name.removesuffix(".json") for path in FILES} == SPEC_NAMES | INTEGRATION_NAMES
    assert len(schemas.schema_set().schemas) == 58
    versions = {sid: version for sid, version in schemas.schema_set().schemas}
    assert {sid for sid, version in versions.items() if version == 2} == AT_VERSION_2
    assert set(versions.values()) == {1, 2}


def test_the_own_set_holds_none_of_the_spec_names() -> None:
    own_ids = {sid for sid, _ in schemas.own_schema_set().schemas}
    assert own_ids and not own_ids & (SPEC_NAMES | INTEGRATION_NAMES)
    assert own_ids == {name.removesuffix(".json") for name in OWN}


@pytest.mark.parametrize("name", sorted(set(LOADED) - OWN))
def test_the_spec_set_refers_to_nothing_outside_itself(name: str) -> None:
    refs = [node["$ref"] for _, node in _walk(LOADED[name]) if "$ref" in node]
    assert all(ref.startswith("#") or (ref.split("#")[0] in LOADED and ref.split("#")[0] not in OWN) for ref in refs), (
        refs
    )


@pytest.mark.parametrize("name", list(LOADED))
def test_every_schema_is_valid_draft_2020_12(name: str) -> None:
    schema = LOADED[name]
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == f"https://schemas.spine.invalid/{'own/' if name in OWN else ''}{name}"
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


def test_the_own_digest_covers_exactly_the_own_files() -> None:
    expected = hashlib.sha256(b"".join(path.read_bytes() for path in OWN_FILES)).hexdigest()
    assert schemas.own_schema_set_digest() == schemas.own_schema_set().digest == expected
    assert expected != schemas.schema_set_digest()


def test_the_version_text_reports_both_digests() -> None:
    from spine.cli import version_text

    lines = version_text().splitlines()
    assert f"schema-set sha256:{schemas.schema_set_digest()}" in lines
    assert f"own-schema-set sha256:{schemas.own_schema_set_digest()}" in lines


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


# validator_for


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


# loader refusals


def _copy_set(tmp_path: Path) -> Path:
    for path in FILES:
        shutil.copy(path, tmp_path / path.name)
    return tmp_path


def test_loader_reads_a_copy_with_the_same_digest(tmp_path: Path) -> None:
    loaded = schemas.load_schema_set(_copy_set(tmp_path))
    assert loaded.digest == schemas.schema_set_digest()
    assert dict(loaded.schemas) == dict(schemas.schema_set().schemas)


def test_loader_reads_the_own_set_under_its_base(tmp_path: Path) -> None:
    for path in OWN_FILES:
        shutil.copy(path, tmp_path / path.name)
    loaded = schemas.load_schema_set(tmp_path, schemas.OWN_SCHEMA_BASE_URI)
    assert loaded.digest == schemas.own_schema_set_digest()
    with pytest.raises(schemas.SchemaSetError, match=r"\$id must be https://schemas.spine.invalid/svc"):
        schemas.load_schema_set(tmp_path)


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
    [
        (None, 1, "schema_id"),
        ("svc.x", None, "schema_version"),
        ("svc.x", "1", "schema_version"),
        ("svc.x", True, "schema_version"),
        (7, 1, "schema_id"),
    ],
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
