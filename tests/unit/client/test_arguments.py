"""A tool's arguments are refused before any request when the gateway would never see them
right: more than 65,536 bytes serialised (the spec's limit), a float anywhere (decimals are
strings), an unknown or missing argument, a parameter that is not a string or an integer, a
body that is not an object, a batch bound out of range. Each refusal names what was wrong and
what is allowed."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spine.client import ArgumentError, Gateway, tool
from spine.client.table import MAX_ARGUMENT_BYTES
from spine.client.transport import _request, check_arguments

SUBMIT = tool("backtests_submit")


def body_of_size(size: int) -> dict[str, Any]:
    """``{"body": {"strategy_id": "s", "label": "xxx..."}}`` serialised in exactly ``size`` bytes."""
    bare = len(json.dumps({"body": {"strategy_id": "s", "label": ""}}, separators=(",", ":")))
    return {"body": {"strategy_id": "s", "label": "x" * (size - bare)}}


def test_the_limit_is_65536_bytes_serialised() -> None:
    check_arguments(SUBMIT, body_of_size(MAX_ARGUMENT_BYTES))
    with pytest.raises(ArgumentError, match="65537 bytes serialised; at most 65536"):
        check_arguments(SUBMIT, body_of_size(MAX_ARGUMENT_BYTES + 1))


def test_the_limit_counts_utf8_bytes_not_characters() -> None:
    arguments = body_of_size(MAX_ARGUMENT_BYTES)
    arguments["body"]["label"] = "é" * (len(arguments["body"]["label"]) // 2 + 1)
    with pytest.raises(ArgumentError, match="at most 65536"):
        check_arguments(SUBMIT, arguments)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
)


@given(JSON)
def test_values_without_floats_pass_the_float_check(value: Any) -> None:
    check_arguments(SUBMIT, {"body": {"x": value}})


@given(JSON, st.floats(allow_nan=False), st.randoms(use_true_random=False))
def test_a_float_anywhere_is_refused_naming_where(value: Any, number: float, rnd: Any) -> None:
    body: dict[str, Any] = {"x": value}
    # Put the float at a random place along a random path of containers.
    holder: Any = body
    key: Any = "x"
    while isinstance(holder[key], dict | list) and holder[key] and rnd.random() < 0.7:
        holder = holder[key]
        key = rnd.choice(list(holder)) if isinstance(holder, dict) else rnd.randrange(len(holder))
    holder[key] = number
    with pytest.raises(ArgumentError, match="is a float; decimals and timestamps are strings") as refused:
        check_arguments(SUBMIT, {"body": body})
    assert str(refused.value).startswith("backtests_submit: body")


def test_a_float_parameter_is_refused_naming_it() -> None:
    with pytest.raises(ArgumentError, match=r"bars_list: limit is a float"):
        check_arguments(tool("bars_list"), {"limit": 5.0})


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("bars_list", {"instrument": "X.SIM"}, r"unknown arguments \['instrument'\]; allowed \['instrument_id'"),
        ("backtests_get", {}, r"missing arguments \['id'\]"),
        ("facts_list", {"cursor": "c"}, r"missing arguments \['kind'\]"),
        ("backtests_submit", {}, r"missing arguments \['body'\]"),
        ("bars_list", {"limit": True}, "limit must be a string or an integer, not bool"),
        ("bars_list", {"instrument_id": ["X.SIM"]}, "instrument_id must be a string or an integer, not list"),
        ("backtests_submit", {"body": ["strategy_id"]}, "body must be a JSON object"),
    ],
)
def test_a_refusal_names_what_was_wrong(name: str, arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(ArgumentError, match=message):
        check_arguments(tool(name), arguments)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"max_events": 0}, "max_events must be an integer from 1 to 1000, not 0"),
        ({"max_events": 1001}, "max_events must be an integer from 1 to 1000, not 1001"),
        ({"seconds": 61}, "seconds must be an integer from 1 to 60, not 61"),
        ({"seconds": "5"}, "seconds must be an integer from 1 to 60, not '5'"),
    ],
)
def test_a_batch_bound_out_of_range_is_refused_before_any_request(arguments: dict[str, Any], message: str) -> None:
    with Gateway("http://127.0.0.1:9") as gateway, pytest.raises(ArgumentError, match=message):
        gateway.batch(tool("stream_bars"), arguments)


def test_a_request_fills_and_encodes_the_path_and_keeps_the_query() -> None:
    path, query = _request(tool("strategies_revision_file"), {"id": "ema", "revision": "a" * 64, "path": "src/a b.py"})
    assert path == f"/v2/strategies/ema/revisions/{'a' * 64}/files/src/a%20b.py"
    path, query = _request(tool("coverage_get"), {"id": "BTC/USDT.SIM"})
    assert path == "/v2/coverage/BTC%2FUSDT.SIM" and query == {}
    path, query = _request(tool("bars_list"), {"instrument_id": "X.SIM", "limit": 5, "cursor": None})
    assert path == "/v2/bars" and query == {"instrument_id": "X.SIM", "limit": "5"}
