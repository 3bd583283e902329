"""A backtest through the whole stack, all real processes on loopback: a venue node writing
its catalogs, the gateway (private-operator) and a ``spine worker`` with the real runner. A
strategy saved from the EMA-cross template is submitted over HTTP and followed on the job
stream to COMPLETED; the report, every output part and the v1 records it produced are served
and schema-valid, and agree with each other."""

from __future__ import annotations

import json
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "backtest"))

from backtest_support import IID, node_catalog  # noqa: E402
from gateways import save_strategy, spawn_gateway  # noqa: E402
from nodes import envelope, free_port, get, post, running_node, stop, wait_for  # noqa: E402
from screeners import ok  # noqa: E402
from workers import real_worker  # noqa: E402

from reference.wire_validator import validate  # noqa: E402
from spine.wire.outputs import SERVED_PARTS  # noqa: E402

TERMINAL = {"COMPLETED", "FAILED", "CANCELLED"}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    home = tmp_path_factory.mktemp("stack")
    dead = f"http://127.0.0.1:{free_port()}"
    # A second catalog with a long history of another instrument: a run long enough to cancel.
    long_history = node_catalog(home / "long", bars=150_000)
    (home / "node").mkdir()
    with running_node(home / "node", warm_bars=2_000) as node:
        # The gateway knows the catalog dirs the worker reads beside the node's (spine up's imports).
        process, gateway = spawn_gateway(
            home / "gateway",
            [node],
            dead,
            f"catalogs = [{str(long_history)!r}]\n",
            SPINE_DEPLOYMENT_MODE="private-operator",
        )
        database = f"sqlite:///{home / 'gateway' / 'spine.db'}"
        try:
            with real_worker(home, database, [home / "node" / "data" / "catalog", long_history]):
                wait_for(process, lambda: get(gateway + "/v2/health")[1]["ready"] is True, "ready")
                # The node flushes its closed bars to its catalog every 0.5 s.
                wait_for(
                    process,
                    lambda: any((home / "node" / "data" / "catalog" / "external").rglob("*.parquet")),
                    "a flushed catalog",
                )
                yield gateway
        finally:
            stop(process)


def follow(gateway: str, job_id: str) -> list[dict[str, Any]]:
    """The job's events from the live stream, to its final state."""
    events = []
    with urllib.request.urlopen(gateway + f"/v2/stream/backtests?job_id={job_id}", timeout=240) as response:
        name = None
        for raw in response:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: ") and name in ("state", "log"):
                events.append(json.loads(line[6:]))
    return events


def test_a_template_backtest_runs_end_to_end(stack: str) -> None:
    gateway = stack
    files = ok(gateway + "/v2/strategy-templates/ema_cross")["files"]
    save_strategy(gateway, "ema_stack", files, message="from the template")
    assert ok(gateway + "/v2/strategies/ema_stack/validate")["valid"] is True  # BTCUSDT.SIM is on the node
    status, receipt = post(
        gateway + "/v2/backtests",
        {"strategy_id": "ema_stack", "parameters": {"fast": "3", "slow": "8"}, "label": "stack"},
    )
    assert status == 202, receipt
    job_id = receipt["job_id"]
    events = follow(gateway, job_id)
    for event in events:
        validate(event)
    states = [e["state"] for e in events if e["type"] == "STATE"]
    assert states[0] == "QUEUED" and states[1] == "RUNNING" and states[-1] == "COMPLETED", events
    assert [e["sequence"] for e in events] == list(range(1, len(events) + 1))
    assert events == ok(gateway + f"/v2/backtests/{job_id}/events?limit=1000")["items"]

    detail = ok(gateway + f"/v2/backtests/{job_id}")
    assert detail["state"] == "COMPLETED" and detail["execution"] == {
        "capital": "100000",
        "currency": "USDT",
        "fee_model": "MAKER_TAKER",
        "fill_model": "FILL_MODEL",
        "seed": 42,
    }
    report = ok(gateway + f"/v2/backtests/{job_id}/report")
    assert report["run_id"] == detail["run_id"] and report["job_id"] == job_id
    assert report["config_hash"] == receipt["config_hash"] and report["instruments"] == ["BTCUSDT.SIM"]

    parts = {}
    for part in (served.value for served in SERVED_PARTS):
        page = ok(gateway + f"/v2/backtests/{job_id}/outputs/{part}?limit=1000")
        assert page["part"] == part and page["run_id"] == report["run_id"] and page["next_cursor"] is None
        for item in page["items"]:
            validate(item)
        parts[part] = page["items"]
    assert (len(parts["orders"]), len(parts["fills"]), len(parts["positions"])) == (
        report["orders"],
        report["fills"],
        report["positions"],
    )
    assert parts["statistics"][0]["ending_balance"] == report["ending_balance"]
    assert [s["lifecycle"] for s in parts["engine_status"]][-1] == "COMPLETED"
    assert parts["engine_status"][-1]["counters"]["fills"] == report["fills"]

    for path, part in (("/signals", "signals"), ("/chart-markers", "markers"), ("/retirements", "retirements")):
        page = ok(gateway + f"{path}?job_id={job_id}&limit=1000")
        assert page["items"] == parts[part]
    assert ok(gateway + f"/engine-status?job_id={job_id}")["engine_status"] == parts["engine_status"][-1]
    assert job_id in {j["job_id"] for j in ok(gateway + "/v2/backtests?state=COMPLETED")["items"]}


def test_the_same_request_gives_the_same_result(stack: str) -> None:
    """Two submissions of one request on the same bars (a span the node has flushed): two jobs,
    one run_id and one result_hash."""
    gateway = stack
    first = ok(gateway + "/v2/bars?instrument_id=BTCUSDT.SIM&limit=5000")["bars"]
    end = first[-40]["ts_event"] if len(first) > 60 else first[-1]["ts_event"]
    body = {"strategy_id": "ema_stack", "parameters": {"fast": "3", "slow": "8"}, "end": end}
    reports = []
    for _ in range(2):
        _, receipt = post(gateway + "/v2/backtests", body)
        assert follow(gateway, receipt["job_id"])[-1]["state"] == "COMPLETED"
        reports.append(ok(gateway + f"/v2/backtests/{receipt['job_id']}/report"))
    assert reports[0]["job_id"] != reports[1]["job_id"]
    assert (reports[0]["run_id"], reports[0]["result_hash"]) == (reports[1]["run_id"], reports[1]["result_hash"])


def test_a_running_backtest_is_cancelled_promptly(stack: str) -> None:
    gateway = stack
    status, receipt = post(gateway + "/v2/backtests", {"strategy_id": "ema_stack", "instrument_id": IID})
    assert status == 202, receipt
    job_id = receipt["job_id"]
    wait_for_state(gateway, job_id, "RUNNING")
    cancelled = ok(gateway + f"/v2/backtests/{job_id}/cancel")
    assert cancelled["state"] in ("RUNNING", "CANCELLED")
    events = follow(gateway, job_id)  # ends at the job's final state
    assert events[-1]["state"] == "CANCELLED"
    detail = ok(gateway + f"/v2/backtests/{job_id}")
    assert detail["state"] == "CANCELLED" and detail["run_id"] is None
    assert get(gateway + f"/v2/backtests/{job_id}/report")[0] == 409
    assert get(gateway + f"/v2/backtests/{job_id}/cancel")[0] == 409


def wait_for_state(gateway: str, job_id: str, state: str, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while ok(gateway + f"/v2/backtests/{job_id}")["state"] != state:
        assert time.monotonic() < deadline, f"{job_id} not {state} within {seconds} s"
        time.sleep(0.05)


def test_what_a_run_would_lack_is_refused_at_submit(stack: str) -> None:
    """An instrument no node lists, a span with no bars and a quantity finer than the size step
    the node serves are refused at submit (4xx naming what is allowed), never queued to fail."""
    gateway = stack
    files = ok(gateway + "/v2/strategy-templates/ema_cross")["files"]
    save_strategy(gateway, "lack_stack", files)
    text = envelope(
        post(gateway + "/v2/backtests", {"strategy_id": "lack_stack", "instrument_id": "NOPE.SIM"}), 404, "NOT_FOUND"
    )
    assert "NOPE.SIM" in text and "/v2/instruments" in text, text
    text = envelope(
        post(gateway + "/v2/backtests", {"strategy_id": "lack_stack", "instrument_id": "ABC.NOWHERE"}), 404, "NOT_FOUND"
    )
    assert "NOWHERE" in text and "SIM" in text, text
    for resolution in ("1m", "1h"):
        text = envelope(
            post(
                gateway + "/v2/backtests",
                {"strategy_id": "lack_stack", "resolution": resolution, "start": "2001-01-01", "end": "2001-01-02"},
            ),
            400,
            "NO_BARS",
        )
        assert "BTCUSDT.SIM" in text and resolution in text, text
    [ref] = [i for i in ok(gateway + "/v2/instruments?limit=1000")["items"] if i["instrument_id"] == "BTCUSDT.SIM"]
    precision = ref["size_precision"]
    fine = "0." + "0" * precision + "1"
    fine_files = [
        {**f, "content": f["content"].replace('quantity = "{quantity}"', f'quantity = "{fine}"')}
        if f["path"] == "strategy.toml"
        else f
        for f in files
    ]
    save_strategy(gateway, "fine_stack", fine_files)
    text = envelope(post(gateway + "/v2/backtests", {"strategy_id": "fine_stack"}), 400, "INVALID_QUANTITY")
    assert f"quantity {fine}" in text and "BTCUSDT.SIM" in text and ref["size_increment"] in text, text
