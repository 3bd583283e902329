"""svc.condition_registry and svc.strategy_authoring_registry: schema-valid, and in step
with the grammar the validator enforces and the feature registry."""

from __future__ import annotations

from strategy_schemas import schema_errors

from spine._core import feature_specs
from spine.strategies.catalog import feature_kinds
from spine.strategies.conditions import authoring_registry, condition_registry
from spine.strategies.rules import OPS
from spine.strategies.templates import TEMPLATE_IDS


def test_condition_registry_is_schema_valid_and_complete() -> None:
    document = condition_registry()
    assert schema_errors("svc.condition_registry", document) == []
    ids = [c["condition_id"] for c in document["conditions"]]
    assert ids == [
        "all",
        "any",
        "lt",
        "le",
        "gt",
        "ge",
        "eq",
        "ne",
        "between",
        "is_absent",
        "is_not_absent",
        "crosses_above",
        "crosses_below",
    ]
    assert set(ids) == {"all", "any", *(op.lower() for op in OPS)}
    by_id = {c["condition_id"]: c for c in document["conditions"]}
    assert by_id["lt"]["operands"] == [
        {"name": "key", "kind": "ROW_KEY"},
        {"name": "value", "kind": "DECIMAL"},
        {"name": "ref", "kind": "ROW_KEY"},
    ]
    assert "`ref`" in by_id["crosses_above"]["description"] and "`value`" in by_id["gt"]["description"]
    assert [o["name"] for o in by_id["between"]["operands"]] == ["key", "low", "high"]
    assert all(c["description"] for c in document["conditions"])


def test_authoring_registry_lists_keys_conditions_and_templates() -> None:
    document = authoring_registry()
    assert schema_errors("svc.strategy_authoring_registry", document) == []
    registry_keys = [f"{s['feature_id']}.{o['name']}" for s in feature_specs() for o in s["outputs"]]
    assert document["row_keys"] == ["bar.open", "bar.high", "bar.low", "bar.close", "bar.volume", *registry_keys]
    assert document["conditions"] == [c["condition_id"] for c in condition_registry()["conditions"]]
    assert document["templates"] == list(TEMPLATE_IDS)


def test_every_registry_implementation_is_a_declarable_kind() -> None:
    kinds = feature_kinds()
    for spec in feature_specs():
        kind = spec["implementation"].removeprefix("spine_core.features.")
        assert kinds[kind].implementation == spec["implementation"]
        assert set(kinds[kind].parameters) <= set(spec["parameters"])
        assert kinds[kind].outputs == {o["name"]: o["scale"] for o in spec["outputs"]}
    assert kinds["rsi"].parameters == ("period",) and kinds["bollinger"].parameters == ("k", "period")
