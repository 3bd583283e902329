"""The six screener documents: each example validates, the identities in the examples follow the
rules the schemas state, and the schemas refuse what the wire must never carry (unknown fields,
floats or numbers where decimal strings are required, bad operators, missing fields, limits out
of range, a direction that contradicts its pattern).

Verdicts come from the independent validator (jsonschema's stock Draft202012Validator over
schemas/, tests/reference/wire_validator.py, pinned decision 8); the one exception is named.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from jsonschema import ValidationError

from reference.canonical_json import identity
from reference.observations import PATTERNS, UP
from reference.wire_validator import put, validate
from spine.schemas import all_schemas, validator_for

EXAMPLES = Path(__file__).resolve().parents[2] / "tests" / "data" / "wire_examples"
SCREENER_IDS = (
    "svc.feature_state",
    "svc.screener_row",
    "svc.screener_snapshot",
    "svc.screen_definition",
    "svc.screen_result",
    "svc.pattern_observation",
)
TAGS = ("version", "schema_id", "schema_version")
IID, TS = "BTCUSDT-PERP.SIM", "1700000100000000000"
Doc = dict[str, Any]


def example(schema_id: str) -> Doc:
    loaded: Doc = json.loads((EXAMPLES / f"{schema_id}.json").read_text(encoding="utf-8"))
    return loaded


def valid(schema_id: str, document: object) -> bool:
    try:
        validate(document, schema_id)  # type: ignore[arg-type]
    except ValidationError:
        return False
    return True


def edited(schema_id: str, edit: Callable[[Doc], object]) -> bool:
    """The verdict on the example after ``edit`` changed it in place."""
    document = copy.deepcopy(example(schema_id))
    edit(document)
    return valid(schema_id, document)


# the set and the examples


def test_the_six_are_in_the_registry_at_version_1() -> None:
    assert {(schema_id, 1) for schema_id in SCREENER_IDS} <= set(all_schemas())


@pytest.mark.parametrize("schema_id", SCREENER_IDS)
def test_the_example_validates(schema_id: str) -> None:
    document = example(schema_id)
    validate(document, schema_id)
    assert document["version"] == "spine.v2" and document["schema_id"] == schema_id
    assert document["schema_version"] == 1


def test_the_example_identities_follow_the_stated_rules() -> None:
    result = example("svc.screen_result")
    definition = {k: v for k, v in result["definition"].items() if k not in TAGS}
    assert result["screen_id"] == identity("screen_id", definition)
    assert result["definition"] == example("svc.screen_definition")
    observation = example("svc.pattern_observation")
    key = {k: observation[k] for k in ("instrument_id", "resolution", "pattern", "ts_event")}
    assert observation["observation_id"] == identity("observation_id", key)
    snapshot = example("svc.screener_snapshot")
    assert snapshot["next_cursor"] is None  # one page: its rows are the whole snapshot
    assert snapshot["snapshot_id"] == identity("snapshot_id", snapshot["rows"])


@pytest.mark.parametrize("schema_id", SCREENER_IDS)
@pytest.mark.parametrize("tag", TAGS)
def test_a_wrong_or_missing_tag_is_refused(schema_id: str, tag: str) -> None:
    wrong = {"version": "spine.v1", "schema_id": "svc.feature_row", "schema_version": 2}[tag]
    assert not edited(schema_id, put(tag, wrong))
    assert not edited(schema_id, lambda d: d.pop(tag))


@pytest.mark.parametrize("schema_id", SCREENER_IDS)
def test_every_required_field_is_required(schema_id: str) -> None:
    for field in example(schema_id):
        assert not edited(schema_id, lambda d, field=field: d.pop(field)), field


# unknown fields, at the top and inside

# Where an unknown field is added: a path of keys and indexes (row keys hold a dot).
UNKNOWN_INSIDE: list[tuple[str, tuple[str | int, ...]]] = [
    ("svc.feature_state", ()),
    ("svc.screener_row", ()),
    ("svc.screener_row", ("values", "rsi_14.value")),
    ("svc.screener_snapshot", ()),
    ("svc.screener_snapshot", ("rows", 0)),
    ("svc.screener_snapshot", ("rows", 0, "values", "rsi_14.value")),
    ("svc.screen_definition", ()),
    ("svc.screen_definition", ("filter",)),
    ("svc.screen_definition", ("filter", "all", 0)),
    ("svc.screen_definition", ("filter", "all", 1)),
    ("svc.screen_definition", ("filter", "all", 2, "any", 0)),
    ("svc.screen_definition", ("sort", 0)),
    ("svc.screen_result", ()),
    ("svc.screen_result", ("definition",)),
    ("svc.screen_result", ("definition", "filter", "all", 0)),
    ("svc.screen_result", ("rows", 0)),
    ("svc.screen_result", ("rows", 0, "values", "rsi_14.value")),
    ("svc.pattern_observation", ()),
    ("svc.pattern_observation", ("values", "sma_50.value")),
]


def _path_id(value: object) -> str:
    return ".".join(map(str, value)) or "top" if isinstance(value, tuple) else str(value)


@pytest.mark.parametrize(("schema_id", "path"), UNKNOWN_INSIDE, ids=_path_id)
def test_an_unknown_field_is_refused(schema_id: str, path: tuple[str | int, ...]) -> None:
    def edit(document: Doc) -> None:
        node: Any = document
        for part in path:
            node = node[part]
        node["unexpected"] = "1"

    assert not edited(schema_id, edit)


# svc.screen_definition: the request grammar


def screen(**changes: object) -> Doc:
    return {**example("svc.screen_definition"), **changes}


def where(condition: object) -> bool:
    return valid("svc.screen_definition", screen(filter=condition))


ACCEPTED = [{"key": "rsi_14.value", "op": op, "value": "70.5"} for op in ("LT", "LE", "GT", "GE", "EQ", "NE")] + [
    {"key": "rsi_14.value", "op": "BETWEEN", "low": "-1", "high": "0.25"},
    {"key": "rsi_14.value", "op": "IS_ABSENT"},
    {"key": "rsi_14.value", "op": "IS_NOT_ABSENT"},
    {"any": [{"key": "rsi_14.value", "op": "IS_ABSENT"}]},
    {"all": [{"key": "rsi_14.value", "op": "GT", "value": "0"}] * 32},
    None,
]

REFUSED = {
    "float value": {"key": "rsi_14.value", "op": "GT", "value": 70.5},
    "integer value": {"key": "rsi_14.value", "op": "GT", "value": 70},
    "exponent value": {"key": "rsi_14.value", "op": "GT", "value": "1e5"},
    "negative zero": {"key": "rsi_14.value", "op": "GT", "value": "-0"},
    "null value": {"key": "rsi_14.value", "op": "EQ", "value": None},
    "comparison without value": {"key": "rsi_14.value", "op": "LT"},
    "comparison without key": {"op": "LT", "value": "1"},
    "unknown op": {"key": "rsi_14.value", "op": "GTE", "value": "1"},
    "lower-case op": {"key": "rsi_14.value", "op": "gt", "value": "1"},
    "op CONTAINS": {"key": "rsi_14.value", "op": "CONTAINS", "value": "1"},
    "BETWEEN without high": {"key": "rsi_14.value", "op": "BETWEEN", "low": "1"},
    "BETWEEN with value": {"key": "rsi_14.value", "op": "BETWEEN", "value": "1"},
    "BETWEEN with float ends": {"key": "rsi_14.value", "op": "BETWEEN", "low": 1.0, "high": 2.0},
    "BETWEEN with a value beside": {"key": "rsi_14.value", "op": "BETWEEN", "low": "1", "high": "2", "value": "1"},
    "IS_ABSENT with a value": {"key": "rsi_14.value", "op": "IS_ABSENT", "value": "1"},
    "GT with low and high": {"key": "rsi_14.value", "op": "GT", "low": "1", "high": "2"},
    "key not <feature>.<output>": {"key": "rsi_14", "op": "IS_ABSENT"},
    "upper-case key": {"key": "RSI_14.value", "op": "IS_ABSENT"},
    "empty all": {"all": []},
    "33 members": {"any": [{"key": "rsi_14.value", "op": "IS_ABSENT"}] * 33},
    "all and any together": {"all": [{"key": "a.b", "op": "IS_ABSENT"}], "any": [{"key": "a.b", "op": "IS_ABSENT"}]},
    "all not a list": {"all": {"key": "a.b", "op": "IS_ABSENT"}},
    "a bad member deep down": {"all": [{"any": [{"key": "a.b", "op": "LT", "value": 1}]}]},
    "NOT is not an operator": {"not": {"key": "a.b", "op": "IS_ABSENT"}},
    "a bare list": [{"key": "a.b", "op": "IS_ABSENT"}],
    "true": True,
}


@pytest.mark.parametrize("condition", ACCEPTED, ids=lambda c: json.dumps(c)[:40])
def test_the_condition_grammar_accepts(condition: object) -> None:
    assert where(condition)


@pytest.mark.parametrize("condition", list(REFUSED.values()), ids=list(REFUSED))
def test_the_condition_grammar_refuses(condition: object) -> None:
    assert not where(condition)


def test_nesting_depth_is_the_servers_to_enforce() -> None:
    # The depth limit of 4 is documented in the schema, not encoded: the schema accepts depth 5.
    condition: object = {"key": "rsi_14.value", "op": "IS_ABSENT"}
    for _ in range(4):
        condition = {"all": [condition]}
    assert where(condition)
    assert "at most 4" in all_schemas()[("svc.screen_definition", 1)]["$defs"]["condition"]["description"]


@pytest.mark.parametrize(
    ("field", "value", "ok"),
    [
        ("resolutions", ["1m", "5m", "15m", "30m", "1h", "4h", "1d"], True),
        ("resolutions", ["1d"], True),
        ("resolutions", [], False),
        ("resolutions", ["5m", "5m"], False),
        ("resolutions", ["2m"], False),
        ("resolutions", ["1s"], False),
        ("resolutions", ["1w"], False),
        ("resolutions", "5m", False),
        ("instrument_ids", None, True),
        ("instrument_ids", [IID], True),
        ("instrument_ids", [f"I{n}.SIM" for n in range(1000)], True),
        ("instrument_ids", [f"I{n}.SIM" for n in range(1001)], False),
        ("instrument_ids", [], False),
        ("instrument_ids", [IID, IID], False),
        ("instrument_ids", ["BTCUSDT"], False),
        ("sort", [], True),
        ("sort", [{"key": f"f{n}.value", "direction": "ASC"} for n in range(4)], True),
        ("sort", [{"key": f"f{n}.value", "direction": "ASC"} for n in range(5)], False),
        ("sort", [{"key": "rsi_14.value", "direction": "asc"}], False),
        ("sort", [{"key": "rsi_14.value", "direction": "UP"}], False),
        ("sort", [{"key": "rsi_14.value"}], False),
        ("sort", [{"direction": "ASC"}], False),
        ("sort", [{"key": "rsi_14.value", "direction": "ASC"}] * 2, False),
        ("sort", None, False),
        ("limit", 1, True),
        ("limit", 1000, True),
        ("limit", 0, False),
        ("limit", 1001, False),
        ("limit", -1, False),
        ("limit", "50", False),
        ("limit", 10.5, False),
        ("limit", None, False),
        ("as_of", None, True),
        ("as_of", TS, True),
        ("as_of", int(TS), False),
        ("as_of", "01", False),
        ("as_of", "-1", False),
        ("as_of", "1.5", False),
    ],
)
def test_screen_fields(field: str, value: object, ok: bool) -> None:
    assert valid("svc.screen_definition", screen(**{field: value})) is ok


def test_a_float_limit_is_refused_by_the_strict_validator() -> None:
    # Stock jsonschema counts 10.0 as an integer; spine.schemas' validator does not.
    assert not validator_for("svc.screen_definition").is_valid(screen(limit=10.0))


# svc.screen_result, svc.screener_row


@pytest.mark.parametrize(
    ("edit", "ok"),
    [
        (put("screen_id", "A" * 64), False),
        (put("screen_id", "a" * 63), False),
        (put("evaluated", -1), False),
        (put("matched", "2"), False),
        (put("as_of", None), False),
        (put("definition.limit", 0), False),
        (put("definition.filter.all.0.low", 30), False),
        (put("definition.schema_id", "svc.screen_result"), False),
        (lambda d: d["definition"].pop("version"), False),
        (put("rows.0.schema_id", "svc.feature_row"), False),
        (lambda d: d["rows"][0].pop("rank"), False),
        (put("rows", []), True),
        (lambda d: d.update(rows=d["rows"][:1] * 1000), True),
        (lambda d: d.update(rows=d["rows"][:1] * 1001), False),
    ],
)
def test_screen_result_rules(edit: Callable[[Doc], object], ok: bool) -> None:
    assert edited("svc.screen_result", edit) is ok


@pytest.mark.parametrize(
    ("edit", "ok"),
    [
        (put("rank", 0), False),
        (put("rank", "1"), False),
        (put("rank", 1.5), False),
        (put("rank", 1000), True),
        (put("ts_event", None), True),
        (put("ts_event", int(TS)), False),
        (put("values", {}), True),
        (put("resolution", "5 minutes"), False),
        (put("instrument_id", "btcusdt.sim"), False),
    ],
)
def test_screener_row_rules(edit: Callable[[Doc], object], ok: bool) -> None:
    assert edited("svc.screener_row", edit) is ok


FEATURE_VALUES = {
    "float decimal": ({"kind": "DECIMAL", "value": 58.4895, "scale": 4}, False),
    "decimal without scale": ({"kind": "DECIMAL", "value": "58.4895"}, False),
    "integer as a number": ({"kind": "INTEGER", "value": -1}, False),
    "nanos as a number": ({"kind": "UNIX_NANOS", "value": int(TS)}, False),
    "unknown kind": ({"kind": "FLOAT", "value": "1"}, False),
    "ABSENT without reason": ({"kind": "ABSENT"}, False),
    "WARMING_UP without counts": ({"kind": "ABSENT", "reason": "WARMING_UP"}, False),
    "null instead of ABSENT": (None, False),
    "zero instead of ABSENT": (0, False),
    "unix nanos": ({"kind": "UNIX_NANOS", "value": TS}, True),
    "input unavailable": ({"kind": "ABSENT", "reason": "INPUT_UNAVAILABLE"}, True),
}


@pytest.mark.parametrize(("value", "ok"), list(FEATURE_VALUES.values()), ids=list(FEATURE_VALUES))
def test_row_values_are_the_feature_row_variants(value: object, ok: bool) -> None:
    assert edited("svc.screener_row", lambda d: d["values"].update({"rsi_14.value": value})) is ok
    assert edited("svc.screener_snapshot", lambda d: d["rows"][0]["values"].update({"rsi_14.value": value})) is ok


def test_a_row_key_outside_the_grammar_is_refused() -> None:
    value = {"kind": "INTEGER", "value": "1"}
    for key in ("rsi_14", "RSI.value", "a.b.c", "1a.b"):
        assert not edited("svc.screener_row", lambda d: d["values"].update({key: value})), key


# svc.screener_snapshot


@pytest.mark.parametrize(
    ("edit", "ok"),
    [
        (put("snapshot_id", "G" * 64), False),
        (put("snapshot_id", None), False),
        (put("sequence", -1), False),
        (put("sequence", "4812"), False),
        (put("sequence", 0), True),
        (put("as_of", None), False),
        (put("as_of", 1.7e18), False),
        (put("next_cursor", None), True),
        (put("next_cursor", ""), False),
        (put("rows", []), True),
        (put("rows.0.schema_id", "svc.screener_row"), False),
        (lambda d: d["rows"][0].pop("schema_version"), False),
        (lambda d: d["rows"][0].pop("values"), False),
    ],
)
def test_snapshot_rules(edit: Callable[[Doc], object], ok: bool) -> None:
    assert edited("svc.screener_snapshot", edit) is ok


# svc.feature_state


@pytest.mark.parametrize(
    ("changes", "ok"),
    [
        ({"warm": True}, True),
        ({"warm": True, "absent": 0}, True),
        ({"absent": 0}, False),
        ({"ts_event": None}, False),
        ({"bars_folded": 0}, False),
        ({"ts_event": None, "bars_folded": 0}, True),
        ({"bars_folded": -1}, False),
        ({"bars_folded": "12"}, False),
        ({"absent": 2.5}, False),
        ({"warm": "false"}, False),
        ({"warm": None}, False),
        ({"channel": "INTERNAL"}, True),
        ({"channel": "BOTH"}, False),
        ({"channel": "external"}, False),
        ({"source_node": "node-sim-1"}, True),
        ({"source_node": ""}, False),
        ({"source_node": "a node"}, False),
        ({"source_node": "x" * 257}, False),
        ({"resolution": "5 minutes"}, False),
        ({"ts_event": "01"}, False),
    ],
)
def test_feature_state_rules(changes: Doc, ok: bool) -> None:
    assert valid("svc.feature_state", {**example("svc.feature_state"), **changes}) is ok


# svc.pattern_observation (the vocabulary and its UP half: the oracle's, tests/reference/observations.py)


def test_the_pattern_vocabulary_is_closed_and_split_by_direction() -> None:
    schema = all_schemas()[("svc.pattern_observation", 1)]
    assert set(schema["properties"]["pattern"]["enum"]) == set(PATTERNS) and len(set(PATTERNS)) == 12
    assert len(UP) == 6 and UP < set(PATTERNS)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_direction_follows_the_pattern(pattern: str) -> None:
    direction, other = ("UP", "DOWN") if pattern in UP else ("DOWN", "UP")
    observation = example("svc.pattern_observation")
    assert valid("svc.pattern_observation", {**observation, "pattern": pattern, "direction": direction})
    assert not valid("svc.pattern_observation", {**observation, "pattern": pattern, "direction": other})


@pytest.mark.parametrize(
    ("edit", "ok"),
    [
        (put("pattern", "GOLDEN_CROSS"), False),
        (put("pattern", "ma_cross_up"), False),
        (put("direction", "FLAT"), False),
        (put("ts_event", None), False),
        (put("observation_id", "0" * 65), False),
        (put("values", {}), False),
        (lambda d: d["values"].update({"sma_50.value": None}), False),
        (lambda d: d["values"].update({"sma_50.value": {"kind": "ABSENT", "reason": "GAP_IN_INPUT"}}), False),
        (lambda d: d["values"].update({"sma_50.value": {"kind": "DECIMAL", "value": 37010.12, "scale": 2}}), False),
        (lambda d: d["values"].update({"macd.hist": {"kind": "INTEGER", "value": "3"}}), True),
    ],
)
def test_observation_rules(edit: Callable[[Doc], object], ok: bool) -> None:
    assert edited("svc.pattern_observation", edit) is ok
