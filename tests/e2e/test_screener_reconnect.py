"""A node stopped and restarted under the screener's feed: the feed reconnects with backoff,
counts the reconnect, catches up from the pages it missed, and goes on folding closes."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from feeds import folded, warmed_feed
from nodes import get, restartable_node, spawn, stop, wait_for
from screeners import spawn_screener

from spine.screener.feed import NodeFeed
from spine.screener.rows import Rows

IID = "BTCUSDT.SIM"


def test_a_restarted_node_is_followed_again(tmp_path: Path) -> None:
    config, env, url = restartable_node(tmp_path)
    process = spawn(config, env)
    processes = [process]
    try:
        wait_for(process, lambda: bool(get(url + "/v2/health")[1]["ready"]), "ready")
        restarted = threading.Event()

        def restart() -> None:
            stop(processes[-1])
            processes.append(spawn(config, env))
            wait_for(processes[-1], lambda: bool(get(url + "/v2/health")[1]["ready"]), "ready again")
            restarted.set()

        async def run() -> tuple[Rows, NodeFeed, int]:
            async with warmed_feed(url, timeout=5.0) as (rows, feed):
                stop_event = asyncio.Event()
                follow = asyncio.create_task(feed.follow(stop_event))
                async with asyncio.timeout(60):
                    await folded(rows, 20)
                    await asyncio.to_thread(restart)
                    before = rows.processed
                    while rows.processed < before + 20 or feed.state != "RUNNING":
                        await asyncio.sleep(0.05)
                stop_event.set()
                await asyncio.wait_for(follow, 15)
                return rows, feed, before

        rows, feed, before = asyncio.run(run())
        assert restarted.is_set()
        assert feed.reconnects >= 1 and feed.connects >= 2 and feed.last_error is not None
        assert feed.accepted >= 2 and feed.closed >= 1 and feed.accounting()["open"] == 0  # stopped
        assert feed.last_error.startswith("UPSTREAM_UNAVAILABLE: node-1: ") and url not in feed.last_error
        assert rows.processed >= before + 20
        served = get(url + f"/v2/bars?instrument_id={IID}&limit=5000")[1]["bars"]
        assert rows.sequence[IID] >= served[0]["sequence"]
    finally:
        for p in processes:
            stop(p)


def test_a_screener_serves_through_its_nodes_restart(tmp_path: Path) -> None:
    """The same, with a real ``spine screener`` process: while the node is down the screener
    answers (DEGRADED, its rows still served); once the node is back the screener is RUNNING
    again, its connection counters show the stream lost and reopened, and it folds on."""
    config, env, url = restartable_node(tmp_path)
    node = spawn(config, env)
    screener, screener_url = None, ""
    try:
        wait_for(node, lambda: bool(get(url + "/v2/health")[1]["ready"]), "ready")
        screener, screener_url = spawn_screener(tmp_path / "screener", url, config="reconnect_max_secs = 1.0\n")

        def health() -> dict[str, Any]:
            document: dict[str, Any] = get(screener_url + "/v2/screener/health")[1]
            return document

        wait_for(screener, lambda: health()["processed"] > 0, "folding closes")
        stop(node)
        wait_for(screener, lambda: health()["process_state"] == "DEGRADED", "degraded")
        status, rows = get(screener_url + f"/v2/screener/rows?instrument_id={IID}")
        assert status == 200 and len(rows["rows"]) == 7
        node = spawn(config, env)
        wait_for(node, lambda: bool(get(url + "/v2/health")[1]["ready"]), "ready again")
        before = health()["processed"]
        wait_for(
            screener,
            lambda: health()["process_state"] == "RUNNING" and health()["processed"] > before + 10,
            "running again",
        )
        [upstream] = health()["connections"]["upstreams"]
        assert upstream["open"] == 1 and upstream["accepted"] >= 2 and upstream["closed"] >= 1
        assert upstream["last_error"] is not None and upstream["last_error"].startswith(
            "UPSTREAM_UNAVAILABLE: node-1: "
        )
        assert url.split("//")[1] not in upstream["last_error"]
    finally:
        if screener is not None:
            stop(screener)
        stop(node)
