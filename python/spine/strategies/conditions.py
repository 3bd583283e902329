"""The registries authors write against: svc.condition_registry (the conditions and their
operands) and svc.strategy_authoring_registry (row keys, condition ids, template ids).
Condition ids are the rule grammar's ops and groups, lowercase; the table below is the one
place they are described."""

from __future__ import annotations

from typing import Any

from spine import _core
from spine.strategies.catalog import BAR_KEYS, registry_row_keys
from spine.strategies.rules import OPS
from spine.strategies.templates import TEMPLATE_IDS

__all__ = ["CONDITIONS", "condition_registry", "authoring_registry"]

_VALUE_OR_REF = (
    'Exactly one of `value` (an exact decimal string, or a "{parameter}" reference) or `ref` '
    "(another row key, whose value is compared exactly, scales aligned)."
)
_ABSENT = "Any comparison with an ABSENT value is false, NE included."
_COMPARE = [("key", "ROW_KEY"), ("value", "DECIMAL"), ("ref", "ROW_KEY")]


def _comparison(symbol: str, meaning: str) -> tuple[str, str, list[tuple[str, str]]]:
    return (
        symbol.lower(),
        f"{{key, op: {symbol}}}: true when key's value {meaning} the other's. {_VALUE_OR_REF} {_ABSENT}",
        _COMPARE,
    )


#: (condition_id, description, operands as (name, kind)); ids are OPS lowercased plus groups.
CONDITIONS: tuple[tuple[str, str, list[tuple[str, str]]], ...] = (
    (
        "all",
        "{all: [conditions]}: true when every member is true; 1..32 members; groups nest at "
        "most 4 deep, the rule's own condition counting as 1. Members are conditions, not operands.",
        [],
    ),
    (
        "any",
        "{any: [conditions]}: true when at least one member is true; 1..32 members; at most "
        "4 deep. Members are conditions, not operands.",
        [],
    ),
    _comparison("LT", "is less than"),
    _comparison("LE", "is less than or equal to"),
    _comparison("GT", "is greater than"),
    _comparison("GE", "is greater than or equal to"),
    _comparison("EQ", "equals"),
    _comparison("NE", "differs from"),
    (
        "between",
        "{key, op: BETWEEN, low, high}: true when low <= key's value <= high, both ends "
        "inclusive; low > high is refused. low and high are exact decimal strings or "
        '"{parameter}" references. ' + _ABSENT,
        [("key", "ROW_KEY"), ("low", "DECIMAL"), ("high", "DECIMAL")],
    ),
    (
        "is_absent",
        "{key, op: IS_ABSENT}: true when key has no value on this bar (warming up, or undefined).",
        [("key", "ROW_KEY")],
    ),
    ("is_not_absent", "{key, op: IS_NOT_ABSENT}: true when key has a value on this bar.", [("key", "ROW_KEY")]),
    (
        "crosses_above",
        "{key, op: CROSSES_ABOVE}: true on the bar where key's value goes from <= the "
        "other to > it (previous bar key <= other, this bar key > other). "
        f"{_VALUE_OR_REF} Both bars must have both values present; the first bar "
        "never crosses.",
        _COMPARE,
    ),
    (
        "crosses_below",
        "{key, op: CROSSES_BELOW}: true on the bar where key's value goes from >= the "
        "other to < it (previous bar key >= other, this bar key < other). "
        f"{_VALUE_OR_REF} Both bars must have both values present; the first bar "
        "never crosses.",
        _COMPARE,
    ),
)
assert {c for c, _, _ in CONDITIONS} == {"all", "any", *(op.lower() for op in OPS)}


def condition_registry() -> dict[str, Any]:
    """The svc.condition_registry document."""
    return {
        "version": _core.WIRE_VERSION,
        "schema_id": "svc.condition_registry",
        "schema_version": 1,
        "conditions": [
            {
                "condition_id": cid,
                "description": text,
                "operands": [{"name": name, "kind": kind} for name, kind in operands],
            }
            for cid, text, operands in CONDITIONS
        ],
    }


def authoring_registry() -> dict[str, Any]:
    """The svc.strategy_authoring_registry document: every row key a rule may read without
    declaring a feature (the bar's, then the default registry's), the condition ids and the
    template ids. A project's declared features add ``<feature_id>.<output>`` keys of their own."""
    return {
        "version": _core.WIRE_VERSION,
        "schema_id": "svc.strategy_authoring_registry",
        "schema_version": 1,
        "row_keys": [*BAR_KEYS, *registry_row_keys()],
        "conditions": [cid for cid, _, _ in CONDITIONS],
        "templates": list(TEMPLATE_IDS),
    }
