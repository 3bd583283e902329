"""``spine node`` as a real process on the accelerated simulated venue: bars land in their own
catalog roots, SIGTERM stops it cleanly with everything persisted, a restart reloads the
series, and a catalog volume that is not writable or a refused write is handled as specified."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import nodes
import pytest
from nautilus_trader.persistence.catalog import ParquetDataCatalog
from nodes import bars_seen, free_port, get, spine_cli, stop, wait_for

START = 29_000_000 * 60 * 10**9


def node_env(data_dir: Path, **extra: str) -> dict[str, str]:
    return nodes.node_env(data_dir, SPINE_SIM_SPEED="600", **extra)


def write_config(path: Path, body: str) -> Path:
    path.write_text(body)
    return path


def run_until(ready: Callable[[str], bool], env: dict[str, str], *args: str) -> tuple[int, str, str]:
    """Run a node on a free port until ``ready(base_url)`` holds (a bounded wait that fails
    with the node's stderr), then SIGTERM it; its exit code and output."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "spine.cli", "node", *args],
        env={**env, "SPINE_PORT": str(port)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(process, lambda: ready(url), "there")
    finally:
        out, err = stop(process)
    return process.returncode, out, err


def answering(url: str) -> bool:
    return bool(get(url + "/v2/health")[1]["ready"])


def bar_types(root: Path) -> list[str]:
    directory = root / "data" / "bar"
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("node")
    return write_config(directory / "node.toml", f"flush_secs = 0.5\n[sim]\nstart_ns = {START}\n")


def test_sigterm_persists_bars_in_separate_roots_and_a_restart_reloads_them(tmp_path: Path, config: Path) -> None:
    code, out, err = run_until(lambda url: bars_seen(url) >= 500, node_env(tmp_path), "--config", str(config))
    assert code == 0, err
    assert "reloaded 0 bars" in out and "catalogs flushed" in out
    external, internal = tmp_path / "catalog" / "external", tmp_path / "catalog" / "internal"
    assert bar_types(external) and all(t.endswith("-EXTERNAL") for t in bar_types(external))
    assert bar_types(internal) and all(t.endswith("-INTERNAL") for t in bar_types(internal))
    stored = ParquetDataCatalog(str(external)).bars(bar_types=["BTCUSDT.SIM-1-MINUTE-LAST-EXTERNAL"])
    assert len(stored) >= 5
    assert [b.ts_event for b in stored] == sorted({b.ts_event for b in stored})
    code, out, err = run_until(answering, node_env(tmp_path), "--config", str(config))
    assert code == 0, err
    reloaded = int(out.split("reloaded ")[1].split(" bars")[0])
    assert reloaded >= len(stored)


def test_an_unwritable_catalog_volume_refuses_to_start(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("x")
    result = spine_cli("node", env=node_env(blocker))
    assert result.returncode == 3 and "refusing to start" in result.stderr


def test_an_unknown_config_key_is_refused_by_name(tmp_path: Path) -> None:
    bad = write_config(tmp_path / "bad.toml", "flush_seconds = 1\n")
    result = spine_cli("node", "--config", str(bad), env=node_env(tmp_path))
    assert result.returncode == 2 and "flush_seconds" in result.stderr


def test_a_tiny_floor_refuses_writes_and_leaves_no_bar_file(tmp_path: Path) -> None:
    floors = write_config(
        tmp_path / "floors.toml", f"flush_secs = 0.5\n[floors]\nmax_files = 0\n[sim]\nstart_ns = {START}\n"
    )

    def refused(url: str) -> bool:  # a flush met the floor (the instruments' write meets it first)
        engine = get(url + "/v2/health")[1]["engine_status"] or {}
        return "catalog write refused" in (engine.get("last_error") or "")

    code, out, err = run_until(refused, node_env(tmp_path / "data"), "--config", str(floors))
    assert code == 0, err
    assert "catalog write refused (EXTERNAL): max_files" in err
    assert not list((tmp_path / "data").rglob("*.parquet"))


def test_a_clean_stop_serves_completed_before_the_http_server_goes(tmp_path: Path) -> None:
    """The spec's RUNNING -> COMPLETED is observable: HTTP stops only after the node stopped
    and flushed, so a client polling through a SIGINT reads the terminal state."""

    port = free_port()
    env = node_env(tmp_path / "data", SPINE_PORT=str(port))
    process = subprocess.Popen(
        [sys.executable, "-m", "spine.cli", "node"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    url = f"http://127.0.0.1:{port}/readiness"
    seen: list[str | None] = []
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and "RUNNING" not in seen:
            try:
                seen.append(get(url)[1]["lifecycle"])
            except OSError:
                time.sleep(0.1)
        assert "RUNNING" in seen, seen
        process.send_signal(signal.SIGINT)
        deadline = time.monotonic() + 30  # bounded: the node stops within seconds
        while time.monotonic() < deadline:
            try:
                seen.append(get(url)[1]["lifecycle"])
            except OSError:
                break  # the server is gone
            time.sleep(0.02)
    finally:
        try:
            # The server goes a moment before the process exits: wait for it (bounded;
            # communicate drains the pipes, which a bare wait could block on). A SIGTERM
            # now would kill a process that is finishing on its own.
            err = process.communicate(timeout=30)[1]
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGTERM)
            err = process.communicate(timeout=60)[1]
    assert process.returncode == 0, (seen[-5:], err[-3000:])
    assert seen[-1] == "COMPLETED", seen[-5:]


def test_a_port_already_in_use_refuses_to_start(tmp_path: Path) -> None:
    """Another process listens on the node's port: the node refuses to start (exit 3, naming
    the address) before it writes anything, instead of ingesting on with no HTTP surface."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = spine_cli("node", env=node_env(tmp_path / "data", SPINE_PORT=str(port)), timeout=30)
    assert result.returncode == 3, result.stderr[-2000:]
    assert "refusing to start" in result.stderr and f"127.0.0.1:{port}" in result.stderr
    assert not (tmp_path / "data").exists()


def test_under_a_flood_the_node_answers_while_it_hydrates_and_stops_cleanly(tmp_path: Path) -> None:
    """The venue at its highest speed on a fresh data dir (every instrument hydrating 5,000
    minutes while the live feed floods in): every health and page request is answered,
    SIGTERM stops and flushes within the documented bound, and the start prints no notice
    of Granian's embedding (a chosen mode, docs/contract.md)."""
    from nodes import STOP_SECS, spawn

    port = free_port()
    config = write_config(
        tmp_path / "node.toml", f"port = {port}\nhydrate_minutes = 5000\n[sim]\nstart_ns = {START}\nspeed = 3600\n"
    )
    process = spawn(config, node_env(tmp_path / "data"))
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(process, lambda: get(url + "/v2/health")[0] == 200, "answering")
        hydrating = 0
        for _ in range(40):
            assert get(url + "/v2/health", timeout=10)[0] == 200
            status, page = get(url + "/v2/bars?instrument_id=BTCUSDT.SIM&limit=500", timeout=10)
            assert status == 200, page
            counts = get(url + "/v2/status", timeout=10)[1]["hydration"]
            hydrating += counts["empty"] + counts["hydrating"] > 0
        assert hydrating, "hydration ended before the flood was measured"
    finally:
        started = time.monotonic()
        out, err = stop(process, STOP_SECS)
    assert process.returncode == 0, err[-3000:]
    assert "catalogs flushed" in out and time.monotonic() - started < STOP_SECS
    assert "Embedded server is experimental" not in err
