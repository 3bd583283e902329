"""``spine screener`` as a real process over a real ``spine node`` on loopback: its routes
answer schema-valid documents (checked by the stock validator), snapshots page consistently
under one identity, bad input is a 400 naming it, other processes' routes are refused, a
screener whose node is down still answers its health, SIGTERM stops it, and a restart restores
its checkpoint (reading only the node's newer bars) to the rows of the node's truth."""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from nodes import envelope, free_port, get, node_env, running_node, spine_cli, stop, wait_for
from screeners import ok, pages, screener, spawn_screener

from reference.canonical_json import identity
from reference.wire_validator import validate
from spine.features import FeatureUniverse, feature_specs
from spine.screener.node_client import bar_columns

__all__ = ["screener"]  # the fixture, imported for this module's tests

IID = "BTCUSDT.SIM"
RESOLUTIONS = ("1m", "5m", "15m", "30m", "1h", "4h", "1d")


def test_health_registry_and_its_own_health(screener: str) -> None:
    health = ok(screener + "/v2/health")
    assert health["ready"] and not health["degraded"] and health["engine_status"] is None
    own = ok(screener + "/v2/screener/health")
    assert own["process_state"] == "RUNNING" and own["last_error"] is None
    assert own["egress"]["events_dropped"] == 0 and own["connections"]["upstreams"][0]["state"] == "RUNNING"
    assert int(own["input_lag_nanos"]) >= 0
    availability = {e["id"]: e["availability"] for e in ok(screener + "/v2/registry")["operations"]}
    assert availability["spine.screener.rows"] == availability["spine.screener.snapshot"] == "READY"
    assert availability["spine.bars.list"] == availability["spine.backtests.list"] == "UNSUPPORTED"
    assert availability["spine.screener.screen"] == "READY"


def test_the_feature_registry_pages_definitions_only(screener: str) -> None:
    items = [spec for page in pages(screener + "/v2/screener/features") for spec in page["items"]]
    assert items == feature_specs()


def test_a_snapshot_pages_one_set_of_rows_under_one_identity(screener: str) -> None:
    got = pages(screener + "/v2/screener/snapshot")
    assert len({(p["snapshot_id"], p["as_of"], p["sequence"]) for p in got}) == 1
    rows = [row for page in got for row in page["rows"]]
    assert len(rows) == 48 * 7
    assert got[0]["snapshot_id"] == identity("snapshot_id", rows)
    assert [(r["instrument_id"], r["resolution"]) for r in rows[:7]] == [
        (rows[0]["instrument_id"], r) for r in ("1m", "5m", "15m", "30m", "1h", "4h", "1d")
    ]


def test_rows_filter_by_instrument_and_resolution(screener: str) -> None:
    mine = pages(screener + f"/v2/screener/rows?instrument_id={IID}", "&")
    assert [(r["instrument_id"], r["resolution"]) for p in mine for r in p["rows"]] == [
        (IID, r) for r in ("1m", "5m", "15m", "30m", "1h", "4h", "1d")
    ]
    one = ok(screener + f"/v2/screener/rows?instrument_id={IID}&resolution=1h")
    assert [(r["instrument_id"], r["resolution"]) for r in one["rows"]] == [(IID, "1h")]
    hourly = pages(screener + "/v2/screener/rows?resolution=1h", "&")
    assert len([r for p in hourly for r in p["rows"]]) == 48


def test_an_instrument_has_its_rows_states_and_vote_from_those_rows(screener: str, base: str) -> None:
    document = ok(screener + f"/v2/screener/instrument/{IID}")
    assert (
        [r["resolution"] for r in document["rows"]]
        == [s["resolution"] for s in document["states"]]
        == ["1m", "5m", "15m", "30m", "1h", "4h", "1d"]
    )
    assert [r["ts_event"] for r in document["rows"]] == [s["ts_event"] for s in document["states"]]
    assert {s["source_node"] for s in document["states"]} == {base}
    assert document["states"][0]["bars_folded"] > 0
    assert all((s["ts_event"] is None) == (s["bars_folded"] == 0) for s in document["states"])
    for row, state, vote in zip(
        document["rows"], document["states"], document["confluence"]["timeframes"], strict=True
    ):
        assert vote["voting"] == state["warm"]
        assert vote["trend"] == (int(row["values"]["trend_200.sign"].get("value", 0)) if state["warm"] else 0)


def test_v1_screener_rows_are_the_screeners_rows(screener: str) -> None:
    got = [ok(screener + "/screener-rows?limit=100")]
    while got[-1]["next_cursor"] is not None:
        got.append(ok(screener + f"/screener-rows?limit=100&cursor={got[-1]['next_cursor']}"))
    items = [item for page in got for item in page["items"]]
    assert {page["kind"] for page in got} == {"screener_rows"} and len(items) == 48 * 7
    for item in items[:14]:
        validate(item)
    assert [(i["instrument_id"], i["resolution"]) for i in items[:7]] == [
        (items[0]["instrument_id"], r) for r in ("1m", "5m", "15m", "30m", "1h", "4h", "1d")
    ]
    status, refusal = get(screener + "/signals")
    assert status == 404 and refusal["version"] == "spine.v1"
    assert refusal["error"]["detail"].startswith("NOT_SUPPORTED_ON_THIS_NODE: ")


#: Each refusal: the path asked, then the status and symbol it is answered with.
REFUSALS = {
    "/v2/screener/rows?resolution=2h": (400, "INVALID_PARAMETER"),
    "/v2/screener/rows?instrument_id=NOPE.SIM": (404, "NOT_FOUND"),
    "/v2/screener/rows?instrument_id=bad%20id": (400, "INVALID_INSTRUMENT_ID"),
    "/v2/screener/snapshot?limit=0": (400, "LIMIT_OUT_OF_RANGE"),
    "/v2/screener/snapshot?cursor=forged": (400, "INVALID_CURSOR"),
    "/v2/screener/features?limit=1001": (400, "LIMIT_OUT_OF_RANGE"),
    "/v2/bars?instrument_id=BTCUSDT.SIM": (404, "NOT_SUPPORTED_ON_THIS_NODE"),
    "/v2/screener/instrument/NOPE.SIM": (404, "NOT_FOUND"),
    "/v2/screener/instrument/bad%20id": (400, "INVALID_INSTRUMENT_ID"),
    "/v2/backtests": (404, "NOT_SUPPORTED_ON_THIS_NODE"),
}


@pytest.mark.parametrize("path", REFUSALS)
def test_bad_input_and_other_processes_routes_are_refused(screener: str, path: str) -> None:
    envelope(get(screener + path), *REFUSALS[path])


def test_a_cursor_of_one_route_does_not_page_another(screener: str) -> None:
    cursor = ok(screener + "/v2/screener/snapshot?limit=10")["next_cursor"]
    envelope(get(screener + f"/v2/screener/rows?resolution=1h&cursor={cursor}"), 400, "INVALID_CURSOR")


def test_a_screener_whose_node_is_down_answers_its_health_and_stops(tmp_path: Path) -> None:
    down = f"http://127.0.0.1:{free_port()}"
    process, url = spawn_screener(tmp_path, down)
    try:
        wait_for(process, lambda: get(url + "/v2/screener/health")[1]["last_error"] is not None, "reporting")
        own = ok(url + "/v2/screener/health")
        assert own["process_state"] == "STARTING" and own["processed"] == 0
        # The node by name and a plain cause: no address, no client exception (its log has those).
        assert (
            own["last_error"] == "UPSTREAM_UNAVAILABLE: node-1: GET /v2/instruments: connection refused or unreachable"
        )
        [upstream] = own["connections"]["upstreams"]
        assert upstream["node"] == "node-1" and upstream["state"] == "STARTING" and upstream["refused"] >= 1
        assert down.split("//")[1] not in json.dumps(own)
        assert (upstream["open"], upstream["accepted"], own["connections"]["refused"]) == (0, 0, upstream["refused"])
        assert ok(url + "/v2/health")["ready"] is False
    finally:
        started = time.monotonic()
        stop(process)
        assert process.returncode == 0 and time.monotonic() - started < 30


def test_a_bad_configuration_exits_2_naming_it(tmp_path: Path) -> None:
    done = spine_cli("screener", "--node", "nowhere", env=node_env(tmp_path))
    assert done.returncode == 2 and "nodes: 'nowhere' is not a node base URL" in done.stderr


#: The process line a feed prints once it has warmed.
WARMED = re.compile(r": warmed (\d+) instruments, (\d+) from the checkpoint; read (\d+) bar pages, (\d+) bars")


def warmed(out: str) -> tuple[int, ...]:
    """(instruments, restored from the checkpoint, bar pages read, bars read) of the one feed."""
    [line] = WARMED.findall(out)
    return tuple(int(n) for n in line)


def health(url: str) -> dict[str, Any]:
    return get(url + "/v2/screener/health")[1]  # type: ignore[no-any-return]


def run_screener_once(directory: Path, node: str, config: str, then: Any = None) -> str:
    """Start a screener, wait until it runs and folds closes (and ``then`` holds), stop it
    with SIGTERM (exit 0); its stdout."""
    process, url = spawn_screener(directory, node, config=config)
    try:
        wait_for(process, lambda: health(url)["process_state"] == "RUNNING", "running")
        wait_for(process, lambda: health(url)["processed"] > 0, "folding closes")
        if then is not None:
            then(process, url)
    finally:
        out, err = stop(process)
    assert process.returncode == 0, err
    return out


def node_truth(node: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of one bulk warm of the node's bars up to the newest the screener folded, with
    the spans the node observed up to then (the reference of test_screener_feed.py)."""
    instrument = next(i for i in get(node + "/v2/instruments?limit=1000")[1]["items"] if i["instrument_id"] == IID)
    page = get(node + f"/v2/bars?instrument_id={IID}&limit=5000")[1]
    last = int(rows[0]["ts_event"])
    bars = bar_columns(
        [b for b in page["bars"] if int(b["ts_event"]) <= last],
        instrument["price_precision"],
        instrument["size_precision"],
    )
    reference = FeatureUniverse()
    index = reference.add(
        channel=page["channel"],
        price_precision=instrument["price_precision"],
        size_precision=instrument["size_precision"],
    )
    for span in page["coverage"]["observed"]:
        start, end = int(span["start"]), min(int(span["end"]), last)
        if start < end:
            reference.observe(index, start, end)
    reference.warm(
        index, *(np.ascontiguousarray(bars[k]) for k in ("ts_event", "open", "high", "low", "close", "volume"))
    )
    return [reference.row(index, r) for r in RESOLUTIONS]


def test_a_restart_restores_the_checkpoint_and_reads_only_newer_bars(tmp_path: Path) -> None:
    """A node at 60x (a venue minute a second) with 30 minutes hydrated: the first start reads
    every instrument's history; the restart, a few seconds later, restores all 48 from the
    checkpoint its predecessor wrote at SIGTERM and reads only the minutes since."""
    config = "checkpoint_secs = 0.5\n"
    data, node_dir = tmp_path / "screener", tmp_path / "node"
    node_dir.mkdir()
    with running_node(node_dir, warm_bars=96, SPINE_SIM_SPEED="60") as node:
        cold = warmed(run_screener_once(data, node, config))
        assert (data / "screener" / "checkpoint.arrow").is_file()
        assert not (data / "screener" / "checkpoint.arrow.tmp").exists()

        def checked(process: subprocess.Popen[str], url: str) -> None:
            wait_for(process, lambda: health(url)["checkpoint_age_nanos"] is not None, "checkpointed")
            own = ok(url + "/v2/screener/health")
            assert 0 <= int(own["checkpoint_age_nanos"]) < 60 * 10**9
            got = ok(url + f"/v2/screener/rows?instrument_id={IID}")["rows"]
            assert [row["values"] for row in got] == node_truth(node, got)

        restarted = warmed(run_screener_once(data, node, config, checked))
    assert cold[:2] == (48, 0) and restarted[:2] == (48, 48)
    assert restarted[3] < cold[3], (cold, restarted)
