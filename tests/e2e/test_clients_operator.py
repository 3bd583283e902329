"""The tool server, the commands and the Python client against a real private-operator
``spine up --paper``: each saves a strategy, submits a backtest of it, follows its events to the
end and reads its report, exactly as the gateway serves them; a stream-backed tool reads a
bounded batch (ended by its count or its seconds); an agent trades on paper through the
gateway to the stack's paper node."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from clients import client, template_dir, text_of, with_tools
from gateways import raw
from mcp import Client as McpClient
from ups import running_up

from reference.wire_validator import validate
from spine.client import Client, GatewayError, equity_frame, fills_frame


class Stack:
    def __init__(self, gateway: str, files: list[dict[str, str]], closes: list[str]) -> None:
        self.gateway, self.files, self.closes = gateway, files, closes
        self.end = closes[-40]

    def body(self, strategy_id: str) -> dict[str, Any]:
        """A backtest of the ema_cross template saved as ``strategy_id``, up to a served bar."""
        return {"strategy_id": strategy_id, "parameters": {"fast": "3", "slow": "8"}, "end": self.end}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    home = tmp_path_factory.mktemp("operator")
    with running_up(home, flags=("--paper",), SPINE_DEPLOYMENT_MODE="private-operator") as up:
        url: str = up.urls()["gateway"]
        catalog = home / "stack" / "node" / "catalog" / "external"
        up.until("a flushed catalog", lambda: any(catalog.rglob("*.parquet")), 120)
        bars = json.loads(raw(url + "/v2/bars?instrument_id=BTCUSDT.SIM&limit=5000")[1])["bars"]
        files = json.loads(raw(url + "/v2/strategy-templates/ema_cross")[1])["files"]
        yield Stack(url, files, [bar["ts_event"] for bar in bars])
        assert up.stop() == 0, up.text()


def save_body(strategy_id: str, files: list[dict[str, str]]) -> dict[str, Any]:
    return {
        "version": "spine.v2",
        "schema_id": "svc.strategy_revision_save_request",
        "schema_version": 2,
        "strategy_id": strategy_id,
        "parent_revision_id": None,
        "message": "",
        "files": files,
    }


def test_an_agent_saves_runs_and_follows_a_backtest_to_its_report(stack: Stack) -> None:
    async def session(tools: McpClient) -> tuple[Any, Any, list[dict[str, Any]], Any]:
        saved = await tools.call_tool("strategies_create", {"body": save_body("agent", stack.files)})
        job = json.loads(text_of(await tools.call_tool("backtests_submit", {"body": stack.body("agent")})))
        events: list[dict[str, Any]] = []
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and not any(e["state"] == "COMPLETED" for e in events):
            after = events[-1]["sequence"] if events else "0"
            batch = await tools.call_tool(
                "stream_backtests", {"job_id": job["job_id"], "after_sequence": str(after), "seconds": 30}
            )
            assert not batch.is_error, batch
            events += [json.loads(block.text) for block in batch.content]
        report = await tools.call_tool("backtests_report", {"id": job["job_id"]})
        return saved, job, events, report

    saved, job, events, report = with_tools(stack.gateway, session)
    assert not saved.is_error and saved.meta["spine/status"] == 201, saved
    validate(job)
    assert [e["state"] for e in events if e["type"] == "STATE"][-1] == "COMPLETED", events
    for event in events:
        validate(event)
    assert not report.is_error
    assert text_of(report).encode() == raw(f"{stack.gateway}/v2/backtests/{job['job_id']}/report")[1]
    validate(json.loads(text_of(report)))


def test_a_stream_tool_reads_a_batch_bounded_by_count_or_by_seconds(stack: Stack) -> None:
    async def session(tools: McpClient) -> tuple[Any, Any, float]:
        counted = await tools.call_tool("stream_bars", {"instrument_id": "BTCUSDT.SIM", "max_events": 2})
        began = time.monotonic()
        # Daily bars: at most one closes in the 20 venue minutes two seconds are at 600x.
        quiet = {"instrument_id": "BTCUSDT.SIM", "resolution": "1d", "max_events": 1000, "seconds": 2}
        timed = await tools.call_tool("stream_bars", quiet)
        return counted, timed, time.monotonic() - began

    counted, timed, took = with_tools(stack.gateway, session)
    assert counted.meta["spine/ended"] == "count" and len(counted.content) == 2
    assert counted.meta["spine/events"] == ["bar", "bar"]
    for block in counted.content:
        bar = json.loads(block.text)
        validate(bar)
        assert bar["instrument_id"] == "BTCUSDT.SIM"
    assert timed.meta["spine/ended"] == "seconds" and len(timed.content) <= 1
    assert 2 <= took < 30  # ends at its seconds, not at the count


def test_the_commands_save_run_and_follow_a_backtest_and_list_it(stack: Stack, tmp_path: Path) -> None:
    project = template_dir(tmp_path / "ema", stack.files)
    code, out, err = client("strategy-save", "terminal", str(project), gateway=stack.gateway)
    assert code == 0 and out.startswith("saved terminal revision "), (out, err)
    (tmp_path / "backtest.json").write_text(json.dumps(stack.body("terminal")))
    code, out, err = client("backtest", "--body", str(tmp_path / "backtest.json"), "--json", gateway=stack.gateway)
    assert code == 0, err
    report = json.loads(out)
    validate(report)
    assert "submitted backtest " in err and "COMPLETED" in err  # the progress line
    assert out.encode() == raw(f"{stack.gateway}/v2/backtests/{report['job_id']}/report")[1] + b"\n"
    code, out, err = client("jobs", "--strategy-id", "terminal", gateway=stack.gateway)
    assert code == 0, err
    header, row = out.splitlines()[:2]
    assert header.split() == ["job_id", "strategy_id", "state", "parameters", *KEY]
    statistics = outputs(stack.gateway, report["job_id"], "statistics")[0]
    run = json.loads(raw(stack.gateway + "/v2/backtests?strategy_id=terminal")[1])["runs"][report["job_id"]]
    assert {"fast": "3", "slow": "8"}.items() <= run["parameters"].items()
    parameters = [f"{name}={value}" for name, value in sorted(run["parameters"].items())]
    assert row.split() == [
        report["job_id"][:12],
        "terminal",
        "COMPLETED",
        *parameters,
        *(str(statistics[k]) for k in KEY),
    ]
    code, out, err = client("backtests-cancel", report["job_id"], gateway=stack.gateway)
    assert code == 1 and "HTTP 409" in err, (code, err)


KEY = ["total_return", "sharpe", "max_drawdown", "trade_count"]


def outputs(gateway: str, job_id: str, part: str) -> list[dict[str, Any]]:
    return json.loads(raw(f"{gateway}/v2/backtests/{job_id}/outputs/{part}?limit=1000")[1])["items"]


def test_a_notebook_saves_runs_follows_and_frames_a_backtest(stack: Stack, tmp_path: Path) -> None:
    project = template_dir(tmp_path / "ema", stack.files)
    with Client(stack.gateway) as spine:
        revision = spine.save_strategy("notebook", project)
        assert revision["strategy_id"] == "notebook"
        again = spine.save_strategy("notebook", project, message="the same files again")
        assert again["parent_revision_id"] == revision["revision_id"]
        job = spine.backtests_submit(body=stack.body("notebook"))
        events = list(spine.follow_backtest(job["job_id"], seconds=240))
        assert events[-1]["type"] == "STATE" and events[-1]["state"] == "COMPLETED"
        equity = spine.backtests_outputs(job["job_id"], "equity", limit=1000)
        frame = equity_frame(equity)
        assert frame["equity"].to_list() == [Decimal(p["equity"]) for p in equity["items"]]  # exact, at one scale
        fills = fills_frame(spine.backtests_outputs(job["job_id"], "fills", limit=1000), backend="pandas")
        assert [str(v) for v in fills["last_px"]] == [
            f["last_px"] for f in outputs(stack.gateway, job["job_id"], "fills")
        ]
        with pytest.raises(GatewayError) as conflict:
            spine.strategies_create(body=save_body("notebook", stack.files))  # not on its head: a conflict
        assert conflict.value.status == 409 and conflict.value.detail.startswith("svc.strategy_mutation_conflict")


def test_the_study_command_creates_a_study_and_follows_it_to_its_best_trial(stack: Stack, tmp_path: Path) -> None:
    project = template_dir(tmp_path / "ema", stack.files)
    assert client("strategy-save", "studied", str(project), gateway=stack.gateway)[0] == 0
    closes = stack.closes
    body = {
        "strategy_id": "studied",
        "search": {"fast": {"low": 2, "high": 6}, "slow": {"low": 8, "high": 20, "step": 4}},
        "objective": {"metric": "ending_equity", "direction": "MAXIMIZE"},
        "trials": 2,
        "parallel": 2,
        "sampler": {"name": "RANDOM", "seed": 5},
        "training": {"start": closes[0], "end": closes[-160]},
        "holdout": {"start": closes[-159], "end": closes[-60]},
    }
    (tmp_path / "study.json").write_text(json.dumps(body))
    code, out, err = client("study", "--body", str(tmp_path / "study.json"), "--json", gateway=stack.gateway)
    assert code == 0, err
    study = json.loads(out)
    validate(study)
    assert study["state"] == "COMPLETED" and study["progress"]["complete"] == 2, study
    assert "created study " in err and "2/2 complete" in err  # the progress line
    code, out, err = client("study", "--body", str(tmp_path / "study.json"), gateway=stack.gateway)
    assert code == 0, err
    fields = dict(line.split(None, 1) for line in out.splitlines())
    best = json.loads(raw(f"{stack.gateway}/v2/studies/{fields['study_id']}/best")[1])["trial"]
    assert fields["best_value"] == best["value"]
    shown = {k.removeprefix("parameters."): v for k, v in fields.items() if k.startswith("parameters.")}
    assert shown == {p["name"]: p["value"] for p in best["params"]}


def test_an_agent_trades_on_paper_through_the_gateway(stack: Stack) -> None:
    order = {"instrument_id": "BTCUSDT.SIM", "side": "BUY", "order_type": "MARKET", "quantity": "0.01"}

    async def session(tools: McpClient) -> tuple[Any, Any, dict[str, Any], Any]:
        refused = await tools.call_tool("orders_submit", {"body": order})  # no paper, no confirmed
        placed = await tools.call_tool("orders_submit", {"body": {**order, "paper": True, "confirmed": True}})
        command = json.loads(text_of(placed))
        deadline = time.monotonic() + 30
        while command["state"] in ("PENDING", "ACCEPTED") and time.monotonic() < deadline:
            command = json.loads(text_of(await tools.call_tool("commands_get", {"id": command["command_id"]})))
        positions = await tools.call_tool("positions_list", {"instrument_id": "BTCUSDT.SIM"})
        return refused, placed, command, positions

    refused, placed, command, positions = with_tools(stack.gateway, session)
    assert refused.is_error and "paper and confirmed must be true" in text_of(refused)
    assert placed.meta["spine/status"] == 202
    validate(command)
    assert command["state"] == "COMPLETED", command
    page = json.loads(text_of(positions))
    validate(page)
    assert page["items"][0]["side"] == "LONG" and page["items"][0]["strategy_id"] == "operator"
