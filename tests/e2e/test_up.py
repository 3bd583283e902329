"""``spine up`` as a real process: it starts a node, a screener and the gateway, writes their
URLs to ``DIR/up.json``, serves bars through the gateway, and on SIGTERM stops every child
(exit 0, no process left, up.json removed); a child killed under it is reported by name and
exit code while the gateway keeps answering; a bad ``--port`` is a usage error naming it."""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path
from typing import Any

from nodes import free_port, get, spine_cli, spine_import
from ups import UP_SECS, running_up

from reference.wire_validator import validate

URL = re.compile(r"http://127\.0\.0\.1:\d{1,5}")


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_up_serves_through_the_gateway_and_stops_every_child(tmp_path: Path) -> None:
    port = free_port()
    with running_up(tmp_path, port) as up:
        urls = up.urls()
        assert set(urls) == {"gateway", "nodes", "screener", "web"} and URL.fullmatch(urls["web"].rstrip("/"))
        assert f"spine up: the UI is {urls['web']}" in up.out.read_text()
        assert f"spine up: agents `spine tools --gateway {urls['gateway']}`" in up.out.read_text()
        status, through = get(urls["web"] + "api/engine/v2/health")  # the UI's proxy to this gateway
        assert status == 200 and through["deployment_mode"] == "public-readonly", through
        assert urls["gateway"] == f"http://127.0.0.1:{port}"
        assert len(urls["nodes"]) == 1 and all(URL.fullmatch(u) for u in (urls["screener"], *urls["nodes"]))
        gateway = urls["gateway"]
        status, health = get(gateway + "/v2/health")
        assert status == 200 and health["ready"] is True, health
        validate(health)
        up.until(
            "upstreams reachable", lambda: all(u["reachable"] for u in get(gateway + "/v2/status")[1]["upstreams"]), 30
        )
        assert [u["name"] for u in get(gateway + "/v2/status")[1]["upstreams"]] == ["node-1", "screener"]
        up.until("serving bars", lambda: get(gateway + "/v2/bars?instrument_id=BTCUSDT.SIM&limit=5")[1]["bars"], 30)
        status, screener = get(gateway + "/v2/screener/health")
        assert status == 200 and screener["process_state"] in ("STARTING", "RUNNING"), screener
        children = up.children()
        workers = [f"worker-{n}" for n in range(1, (os.cpu_count() or 1) + 1)]
        assert sorted(children) == sorted(["gateway", "node", "screener", "web", *workers]), children
        out = up.out.read_text()
        for name, pid in children.items():
            assert f"spine up: {name:<8} " in out and f"(pid {pid})" in out, out

        assert up.stop() == 0, up.text()
        assert all(gone(pid) for pid in children.values()), (children, up.text())
        assert not (tmp_path / "stack" / "up.json").exists()
        out = up.out.read_text()
        assert "node     | spine node spine-node-1: stopped; catalogs flushed" in out, out
        assert (
            out.index("the worker-1 stopped")
            < out.index("the gateway stopped")
            < out.index("the screener stopped")
            < out.index("the node stopped")
        )
        assert out.rstrip().endswith("spine up: stopped cleanly"), out


def test_a_child_that_dies_is_reported_and_the_others_keep_running(tmp_path: Path) -> None:
    with running_up(tmp_path) as up:
        gateway = up.urls()["gateway"]
        children = up.children()
        os.kill(children["screener"], signal.SIGKILL)
        up.until(
            "reporting the screener",
            lambda: "the screener exited on its own with code -9 (SIGKILL)" in up.err.read_text(),
            10,
        )
        assert "still running: node, gateway, web, worker-1" in up.err.read_text()
        status, health = get(gateway + "/v2/health")
        assert status == 200 and health["ready"] is True, health
        assert not gone(children["node"]) and not gone(children["gateway"])
        assert up.stop() == 1, up.text()  # a child failed during the run
        assert all(gone(pid) for pid in children.values()), (children, up.text())
        assert "spine up: the node stopped" in up.out.read_text()


def test_a_bad_port_is_a_usage_error_naming_it() -> None:
    done = spine_cli("up", "--port", "70000")
    assert done.returncode == 2 and "argument --port: 70000: allowed 0..65535" in done.stderr, done.stderr


def test_a_stop_while_the_workers_still_import_is_a_clean_stop(tmp_path: Path) -> None:
    """SIGTERM the moment the workers are started: each is still importing, holds the signal
    until its handler is in place, and stops cleanly (before, one ended of the signal itself
    and spine up called the stop a failure)."""
    workers = os.cpu_count() or 1
    with running_up(tmp_path) as up:
        up.until("starting the workers", lambda: f"spine up: worker-{workers} (pid" in up.out.read_text(), UP_SECS)
        children = up.children()
        assert up.stop() == 0, up.text()
        assert all(gone(pid) for pid in children.values()), (children, up.text())
        out = up.out.read_text()
        for number in range(1, workers + 1):
            assert f"the worker-{number} stopped" in out, out
        assert out.rstrip().endswith("spine up: stopped cleanly"), out


def test_a_dead_worker_is_restarted_and_a_killed_spine_up_takes_its_children_along(tmp_path: Path) -> None:
    port = free_port()
    with running_up(tmp_path, port) as up:
        gateway = up.urls()["gateway"]
        assert "spine up: deployment mode public-readonly" in up.out.read_text()
        first = up.children()["worker-1"]
        os.kill(first, signal.SIGKILL)
        up.until("restarting the worker", lambda: "spine up: restarting the worker-1 in 1 s" in up.err.read_text(), 10)
        assert "the worker-1 exited on its own with code -9 (SIGKILL)" in up.err.read_text()
        up.until("a new worker-1", lambda: up.children().get("worker-1", first) != first, 30)
        up.until(
            "listing both workers",
            lambda: len(get(gateway + "/v2/status")[1]["workers"]["live"]) == (os.cpu_count() or 1),
            30,
        )

        children = up.children()
        up.process.kill()  # SIGKILL: spine up stops nothing itself
        up.process.wait()
        assert (tmp_path / "stack" / "up.json").exists()  # stale: nothing removed it

    # At once, on the same directory and ports: it waits for the orphans, which end by themselves.
    with running_up(tmp_path, port) as again:
        again.until("its own up.json", lambda: "spine up: the UI is" in again.out.read_text(), UP_SECS)
        urls = again.urls()
        assert all(gone(pid) for pid in children.values()), (children, again.text())
        assert urls["gateway"] == f"http://127.0.0.1:{port}"
        status, health = get(urls["gateway"] + "/v2/health")
        assert status == 200 and health["ready"] is True, health
        assert again.stop() == 0, again.text()


def test_imported_venues_are_served_behind_the_gateway(tmp_path: Path) -> None:
    """What ``spine import`` loaded into the stack's import catalog is served with no extra
    configuration: one catalog-venue node per imported venue, behind the gateway and the
    screener, its instruments listed, its bars paged through the gateway, and a daily import's
    1d bars as imported."""
    start = 1_704_067_200  # 2024-01-01T00:00:00Z
    rows = "".join(
        f"{(start + 60 * k) * 10**9},{100 + k % 7},{108 + k % 7},99,{101 + k % 5},{10 + k}\n" for k in range(1, 301)
    )
    (tmp_path / "acme.csv").write_text("timestamp,open,high,low,close,volume\n" + rows)
    imports = tmp_path / "stack" / "imports"
    spine_import("--venue", "XTEST", "--catalog", str(imports), str(tmp_path / "acme.csv"), env=dict(os.environ))
    # A daily import of the same venue: its 1d bars are served as imported.
    days_rows = "2024-01-04,10,12,9,11,100\n2024-01-05,11,13,10,12,50\n"
    (tmp_path / "daily.csv").write_text("date,open,high,low,close,volume\n" + days_rows)
    daily = ("--venue", "XTEST", "--step", "1d", "--symbol", "DAILY", "--catalog", str(imports))
    spine_import(*daily, str(tmp_path / "daily.csv"), env=dict(os.environ))
    with running_up(tmp_path) as up:
        urls = up.urls()
        assert len(urls["nodes"]) == 2, urls
        gateway = urls["gateway"]
        assert "spine up: node-XTEST" in up.out.read_text()
        up.until("listing the import", lambda: "ACME.XTEST" in listed(gateway + "/v2/instruments?limit=500"), 60)
        up.until(
            "serving its bars",
            lambda: (
                len(get(gateway + "/v2/bars?bar_type=ACME.XTEST-1-MINUTE-LAST-EXTERNAL&limit=500")[1]["bars"]) == 300
            ),
            60,
        )
        days = get(gateway + "/v2/bars?bar_type=DAILY.XTEST-1-DAY-LAST-EXTERNAL")[1]["bars"]
        assert [(b["ts_event"], b["close"]) for b in days] == [
            (str((start + 4 * 86_400) * 10**9), "11"),
            (str((start + 5 * 86_400) * 10**9), "12"),
        ], days
        up.until(
            "screening it", lambda: "ACME.XTEST" in listed(gateway + "/v2/screener/snapshot?limit=1000", "rows"), 60
        )
        assert up.stop() == 0, up.text()


def listed(url: str, key: str = "items") -> set[str]:
    """The instrument ids of every page from ``url`` on (the gateway pages node by node)."""
    ids: set[str] = set()
    page: dict[str, Any] = {"next_cursor": ""}
    while page["next_cursor"] is not None:
        page = get(url + (f"&cursor={page['next_cursor']}" if page["next_cursor"] else ""))[1]
        ids |= {item["instrument_id"] for item in page[key]}
    return ids
