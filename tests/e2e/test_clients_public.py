"""The tool server, the commands and the Python client against a real ``spine up`` in its
default public-readonly mode: every door lists the same operations the gateway's registry
names, answers a query with the gateway's own bytes, and gets the gateway's 403 for a command
(a tool error carrying the envelope, exit 1, a GatewayError); refused arguments never reach it."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from clients import GATEWAY_TOKEN, SCREEN, client, text_of, with_tools
from gateways import raw
from mcp import Client as McpClient
from ups import running_up

from reference.wire_validator import validate
from spine.client import ArgumentError, Client, GatewayError, bars_frame

BODY = {"strategy_id": "ema", "parameters": {"fast": "3"}}


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_up(tmp_path_factory.mktemp("public")) as up:
        url: str = up.urls()["gateway"]
        up.until("serving bars", lambda: raw(url + "/v2/bars?instrument_id=BTCUSDT.SIM&limit=5")[0] == 200, 60)
        yield url
        assert up.stop() == 0, up.text()


def test_the_tools_are_the_registry_s_and_a_query_answers_the_gateway_s_bytes(gateway: str) -> None:
    async def session(tools: McpClient) -> tuple[list[Any], Any, Any, Any]:
        listed = (await tools.list_tools()).tools
        instruments = await tools.call_tool("instruments_list", {"limit": 50})
        bars = await tools.call_tool("bars_list", {"instrument_id": "BTCUSDT.SIM", "limit": 5})
        screen = await tools.call_tool("screener_screen", {"body": SCREEN})
        return listed, instruments, bars, screen

    listed, instruments, bars, screen = with_tools(gateway, session)
    registry = json.loads(raw(gateway + "/v2/registry")[1])
    named = {entry["tool"]: entry for entry in registry["operations"] if entry["tool"] is not None}
    assert sorted(t.name for t in listed) == sorted(named)
    for listed_tool in listed:
        assert listed_tool.input_schema["type"] == "object" and listed_tool.description
        hint = listed_tool.annotations.read_only_hint
        assert hint is (named[listed_tool.name]["effect"] != "COMMAND")
    assert not instruments.is_error
    assert text_of(instruments).encode() == raw(gateway + "/v2/instruments?limit=50")[1]
    page = json.loads(text_of(bars))
    validate(page)
    assert page["instrument_id"] == "BTCUSDT.SIM" and len(page["bars"]) == 5
    result = json.loads(text_of(screen))
    validate(result)
    assert not screen.is_error and result["schema_id"] == "svc.screen_result"


def test_a_command_tool_gets_the_gateway_s_403_as_a_tool_error(gateway: str) -> None:
    async def session(tools: McpClient) -> Any:
        return await tools.call_tool("backtests_submit", {"body": BODY})

    refused = with_tools(gateway, session)
    assert refused.is_error and refused.meta["spine/status"] == 403
    assert text_of(refused).encode() == raw(gateway + "/v2/backtests", "POST", BODY)[1]
    assert json.loads(text_of(refused))["error"]["detail"].startswith("MUTATION_REFUSED")


def test_refused_arguments_never_reach_the_gateway(gateway: str) -> None:
    async def session(tools: McpClient) -> list[Any]:
        return [
            await tools.call_tool("backtests_submit", {"body": {**BODY, "label": "x" * 65_536}}),
            await tools.call_tool("bars_list", {"instrument_id": "BTCUSDT.SIM", "limit": 5.0}),
            await tools.call_tool("bars_list", {"instrument": "BTCUSDT.SIM"}),
            await tools.call_tool("no_such_tool", {}),
        ]

    oversized, floated, unknown, missing = with_tools(gateway, session)
    assert all(r.is_error for r in (oversized, floated, unknown, missing))
    assert "at most 65536" in text_of(oversized) and "403" not in text_of(oversized)
    assert "limit is a float" in text_of(floated)
    assert "unknown arguments ['instrument']" in text_of(unknown)
    assert "unknown tool 'no_such_tool'" in text_of(missing)
    assert not any(GATEWAY_TOKEN in text_of(r) for r in (oversized, floated, unknown, missing))


def test_the_commands_answer_as_the_gateway_does(gateway: str, tmp_path: Path) -> None:
    code, out, err = client("instruments-list", "--limit", "50", "--json", gateway=gateway)
    assert code == 0, err
    assert out.encode() == raw(gateway + "/v2/instruments?limit=50")[1] + b"\n"
    code, out, err = client("instruments-list", "--limit", "50", gateway=gateway)
    assert code == 0 and out.splitlines()[0].split()[0] == "instrument_id" and "BTCUSDT.SIM" in out, (out, err)
    # Three closed bars well inside the series: none is evicted, none still forming, between the two reads.
    served = json.loads(raw(gateway + "/v2/bars?instrument_id=BTCUSDT.SIM&limit=500")[1])["bars"][200:203]
    span = ("--start", served[0]["ts_event"], "--end", served[-1]["ts_event"])
    code, out, err = client("bars-list", "--instrument-id", "BTCUSDT.SIM", *span, "--csv", gateway=gateway)
    assert code == 0, err
    assert list(csv.reader(out.splitlines())) == [list(served[0]), *([str(v) for v in bar.values()] for bar in served)]
    (tmp_path / "screen.json").write_text(json.dumps(SCREEN))
    code, out, err = client("screener-screen", "--body", str(tmp_path / "screen.json"), "--json", gateway=gateway)
    assert code == 0, err
    validate(json.loads(out))
    (tmp_path / "backtest.json").write_text(json.dumps(BODY))
    code, out, err = client("backtests-submit", "--body", str(tmp_path / "backtest.json"), gateway=gateway)
    assert code == 1 and "HTTP 403: MUTATION_REFUSED" in err and out == "", (out, err)
    (tmp_path / "float.json").write_text('{"strategy_id": "ema", "parameters": {"fast": 3.5}}')
    code, out, err = client("backtests-submit", "--body", str(tmp_path / "float.json"), gateway=gateway)
    assert code == 2 and "3.5 is a float" in err, err
    code, out, err = client("backtests-get", "0" * 64, gateway=gateway)
    assert code == 1 and "HTTP 404" in err, err
    code, out, err = client(
        "stream-bars", "--instrument-id", "BTCUSDT.SIM", "--max-events", "2", "--json", gateway=gateway
    )
    assert code == 0 and "2 events; the read ended: count" in err, err
    for line in out.splitlines():
        validate(json.loads(line))
    assert len(out.splitlines()) == 2
    code, out, err = client("stream-backtests", "--job-id", "0" * 64, "--seconds", "5", gateway=gateway)
    assert code == 1 and "HTTP 404" in err, (code, err)
    code, out, err = client("health-get", gateway="http://127.0.0.1:9")
    assert code == 3 and "did not answer" in err, err


def test_the_python_client_answers_documents_and_raises_the_gateway_s_errors(gateway: str) -> None:
    with Client(gateway) as spine:
        page = spine.bars_list(instrument_id="BTCUSDT.SIM", limit=20)
        frame = bars_frame(page)
        assert [str(v) for v in frame["close"].to_list()] == [b["close"] for b in page["bars"]]
        assert frame["ts_event"].dt.epoch("ns").to_list() == [int(b["ts_event"]) for b in page["bars"]]
        pages = list(spine.pages("instruments_list", limit=2, most=3))
        assert 1 <= len(pages) <= 3 and all(len(p["items"]) <= 2 for p in pages)
        assert spine.screener_screen(body=SCREEN)["schema_id"] == "svc.screen_result"
        with pytest.raises(GatewayError) as refused:
            spine.backtests_submit(body=BODY)
        assert refused.value.status == 403 and refused.value.detail.startswith("MUTATION_REFUSED")
        with pytest.raises(ArgumentError, match="limit is a float"):
            spine.bars_list(instrument_id="BTCUSDT.SIM", limit=5.0)  # type: ignore[arg-type]
        events = spine.stream_bars(instrument_id="BTCUSDT.SIM", max_events=1, seconds=30)
        assert len(events) == 1 and events[0].event == "bar"
        validate(json.loads(events[0].data))
