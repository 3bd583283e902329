"""The Spine node under test: ``spine node`` on the simulated venue at real-time speed (so
ingestion adds little load while it is measured), with enough hydrated history for a full
500-bar 1-minute page and a folded 1-hour page. The node runs as deployed: its catalog flush
every minute writes on a worker thread, so it stays inside the measured runs."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from pathlib import Path

from benches.http.pages import PATHS
from benches.http.procs import HOST, environment, free_port, get, python, serving

#: A venue minute boundary (the sim clock starts here).
START_NS = 29_000_000 * 60 * 10**9
CONFIG = """hydrate_minutes = {minutes}
port = {port}
log_level = "ERROR"
[sim]
start_ns = {start}
speed = 1.0
"""


@contextlib.contextmanager
def spine_node(work: Path, minutes: int = 5_000, timeout: float = 120.0, speed: float = 1.0) -> Iterator[str]:
    """A running node's base URL, once its history is hydrated (the venue at ``speed``x)."""
    port = free_port()
    config = work / "node.toml"
    config.write_text(
        CONFIG.format(minutes=minutes, port=port, start=START_NS).replace("speed = 1.0", f"speed = {speed:g}")
    )
    env = environment(SPINE_DATA_DIR=str(work / "spine-data"))
    base = f"http://{HOST}:{port}"
    argv = python("-m", "spine.cli", "node", "--config", str(config))
    with serving("spine-node", argv, base + "/v2/health", work, env=env, timeout=timeout):
        wait_hydrated(base, timeout)
        yield base


def wait_hydrated(base: str, timeout: float) -> None:
    """Ready means: every instrument hydrated and the 1m page full (bounded wait)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        counts = json.loads(get(base + "/v2/status")[1]).get("hydration", {})
        status, body = get(base + PATHS["bars_1m_500"])
        full = status == 200 and len(json.loads(body)["bars"]) == 500
        if full and counts.get("ready") and not counts.get("empty") and not counts.get("hydrating"):
            return
        time.sleep(0.5)
    raise TimeoutError(f"spine node at {base}: history not hydrated within {timeout:.0f} s")
