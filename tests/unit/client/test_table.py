"""The tool table: one tool per v2 operation some process serves, named as the registry's
``tool`` field names it, with a self-contained input schema (checked by jsonschema, not our
code) made of the route's parameters and body; and the client's typed methods, generated from
it, are current and take exactly each tool's arguments."""

from __future__ import annotations

import inspect

import jsonschema
import pytest

from spine.client import Client, tools
from spine.client.generate import main as generate
from spine.http.registry import static_registry
from spine.http.routes import OPERATIONS

TOOLS = {t.name: t for t in tools()}


def test_every_served_v2_operation_has_one_tool_and_nothing_else_has_any() -> None:
    fronted = {op.id: op.tool for op in OPERATIONS if op.tool is not None}
    assert sorted(fronted.values()) == sorted(TOOLS)
    assert len(set(fronted.values())) == len(fronted)
    assert {t.operation for t in TOOLS.values()} == set(fronted)
    for op in OPERATIONS:
        if op.deferred or op.wire_version == "v1":
            assert op.tool is None, op.id


@pytest.mark.parametrize("process", ["node", "screener", "gateway"])
def test_the_registry_names_exactly_the_tools_of_the_table(process: str) -> None:
    for entry in static_registry()[process]:
        if entry["tool"] is None:
            assert entry["availability"] == "UNAVAILABLE" or entry["wire_version"] == "v1", entry
            continue
        found = TOOLS[entry["tool"]]
        assert (found.operation, found.method, found.path, found.effect) == (
            entry["id"],
            entry["method"],
            entry["path"],
            entry["effect"],
        )


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_an_input_schema_is_a_valid_self_contained_schema_of_the_route(name: str) -> None:
    found = TOOLS[name]
    schema = found.input_schema
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert list(schema["properties"]) == list(found.arguments)
    assert schema["required"] == list(found.required)
    assert "#/components/" not in str(schema)  # every reference resolves inside the schema


def validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(TOOLS[name].input_schema)


def test_a_body_is_checked_by_the_route_s_own_body_schema() -> None:
    backtest = validator("backtests_submit")
    assert backtest.is_valid({"body": {"strategy_id": "ema", "parameters": {"fast": "3"}}})
    assert not backtest.is_valid({"body": {"strategy_id": "ema", "capital": "1"}})  # sealed keys
    assert not backtest.is_valid({"body": {"strategy_id": "ema", "parameters": {"fast": 1.5}}})  # no floats
    assert not backtest.is_valid({})  # the body is required
    screen = validator("screener_screen")
    assert not screen.is_valid({"body": {"schema_id": "svc.screen_definition"}})


def test_path_parameters_are_required_strings_and_query_parameters_keep_their_schemas() -> None:
    bars = validator("bars_list")
    assert bars.is_valid({"instrument_id": "BTCUSDT.SIM", "limit": 5000})
    assert not bars.is_valid({"limit": 5001}) and not bars.is_valid({"limit": "5"})
    assert not validator("backtests_get").is_valid({})
    assert validator("backtests_get").is_valid({"id": "a" * 64})
    facts = validator("facts_list")
    assert not facts.is_valid({}) and facts.is_valid({"kind": "funding_rate"})


def test_a_stream_tool_takes_its_batch_bounds_and_says_them() -> None:
    found = TOOLS["stream_bars"]
    assert found.stream and found.arguments[-2:] == ("max_events", "seconds")
    stream = validator("stream_bars")
    assert stream.is_valid({"max_events": 1000, "seconds": 60})
    assert not stream.is_valid({"max_events": 1001}) and not stream.is_valid({"seconds": 61})
    assert "at most 1000" in found.description and "at most 60" in found.description


def test_commands_and_pages_say_so_in_their_descriptions() -> None:
    assert "private-operator" in TOOLS["backtests_submit"].description
    assert "private-operator" not in TOOLS["backtests_list"].description
    assert "cursor" in TOOLS["backtests_list"].description


def test_the_generated_methods_are_current() -> None:
    assert generate(["--check"]) == 0


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_each_tool_is_a_client_method_taking_exactly_its_arguments(name: str) -> None:
    signature = inspect.signature(getattr(Client, name))
    found = TOOLS[name]
    assert set(signature.parameters) - {"self"} == set(found.arguments)
    positional = [p.name for p in signature.parameters.values() if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    assert positional == ["self", *found.path_params]
    for argument in found.required:
        assert signature.parameters[argument].default is inspect.Parameter.empty
