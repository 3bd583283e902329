"""HTTP latency while the node ingests, against the same node idle, in one run:

    python -m benches.http.load [--quick] [--json PATH]

1. idle: ``spine node`` at real-time venue speed, measured once every instrument is hydrated
   (the steady state a quiet venue leaves);
2. loaded: the same configuration on a fresh data directory with the simulated venue at its
   highest speed (``sim.speed`` 3,600: a venue hour per wall second), measured from the moment
   it answers ``ready``, while 48 instruments hydrate 5,000 minutes each and the live feed
   floods it;
3. the SIGTERM that ends the loaded node (stop and final flush included), timed.

Each phase sends sequential requests to ``/v2/health`` and a 500-bar 1-minute page, paced,
over keep-alive connections, and reports p50, p99 and max latency. The target is loaded p99
at most 3x idle p99 (issue 23, item 5).
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benches.http.node import CONFIG, START_NS, wait_hydrated
from benches.http.pages import PATHS
from benches.http.procs import HOST, environment, free_port, python, serving

#: The simulated venue's highest speed (``SimConfig.speed`` refuses more).
TOP_SPEED = 3_600.0
ROUTES = {"health": PATHS["health"], "bars_1m_500": PATHS["bars_1m_500"]}
FULL = {"samples": 400, "pace_secs": 0.02}
QUICK = {"samples": 100, "pace_secs": 0.02}


def sample(port: int, samples: int, pace_secs: float) -> dict[str, list[float]]:
    """``samples`` sequential GETs of each route, alternating, each connection kept alive;
    latencies in ms (a request that fails or times out counts as its timeout)."""
    connections = {name: http.client.HTTPConnection(HOST, port, timeout=30) for name in ROUTES}
    out: dict[str, list[float]] = {name: [] for name in ROUTES}
    try:
        for _ in range(samples):
            for name, path in ROUTES.items():
                out[name].append(_timed(connections, name, path, port))
            time.sleep(pace_secs)
    finally:
        for connection in connections.values():
            connection.close()
    return out


def _timed(connections: dict[str, http.client.HTTPConnection], name: str, path: str, port: int) -> float:
    started = time.perf_counter()
    try:
        connection = connections[name]
        connection.request("GET", path)
        response = connection.getresponse()
        response.read()
        if response.status != 200:
            raise RuntimeError(f"{path} answered {response.status}")
    except (OSError, http.client.HTTPException):
        connections[name].close()
        connections[name] = http.client.HTTPConnection(HOST, port, timeout=30)
        return 30_000.0
    return (time.perf_counter() - started) * 1e3


def summary(latencies: list[float]) -> dict[str, float]:
    ordered = sorted(latencies)
    return {
        "p50_ms": statistics.median(ordered),
        "p99_ms": ordered[max(0, int(len(ordered) * 0.99) - 1)],
        "max_ms": ordered[-1],
        "n": len(ordered),
    }


def node(work: Path, name: str, speed: float, minutes: int = 5_000) -> tuple[list[str], dict[str, str], int]:
    port = free_port()
    directory = work / name
    directory.mkdir()
    config = directory / "node.toml"
    config.write_text(
        CONFIG.format(minutes=minutes, port=port, start=START_NS).replace("speed = 1.0", f"speed = {speed}")
    )
    argv = python("-m", "spine.cli", "node", "--config", str(config))
    return argv, environment(SPINE_DATA_DIR=str(directory / "data")), port


def idle_phase(work: Path, setup: dict[str, Any]) -> dict[str, Any]:
    argv, env, port = node(work, "idle", 1.0)
    base = f"http://{HOST}:{port}"
    with serving("node-idle", argv, base + "/v2/health", work, env=env, timeout=180):
        wait_hydrated(base, 180)
        return {name: summary(values) for name, values in sample(port, **setup).items()}


def loaded_phase(work: Path, setup: dict[str, Any]) -> dict[str, Any]:
    argv, env, port = node(work, "loaded", TOP_SPEED)
    base = f"http://{HOST}:{port}"
    with serving("node-loaded", argv, base + "/v2/health", work, env=env, timeout=180) as process:
        result: dict[str, Any] = {name: summary(values) for name, values in sample(port, **setup).items()}
        result["sigterm_secs"] = _timed_stop(process)
    return result


def _timed_stop(process: subprocess.Popen[bytes]) -> float:
    started = time.monotonic()
    process.terminate()
    try:
        process.wait(120)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(5)
        return float("inf")
    return time.monotonic() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--work", type=Path, help="keep the nodes' data and logs here (default: a temporary directory)")
    args = parser.parse_args(argv)
    setup = QUICK if args.quick else FULL
    with tempfile.TemporaryDirectory(prefix="spine-load-") as directory:
        work = args.work or Path(directory)
        work.mkdir(parents=True, exist_ok=True)
        loaded = loaded_phase(work, setup)
        idle = idle_phase(work, setup)
    results = {"idle": idle, "loaded": loaded}
    print(
        f"{'route':<14}{'idle p50':>10}{'idle p99':>10}{'load p50':>10}{'load p99':>10}{'load max':>10}"
        f"{'p99 ratio':>11}  (ms; target ratio <= 3)"
    )
    for name in ROUTES:
        i, lo = idle[name], loaded[name]
        print(
            f"{name:<14}{i['p50_ms']:>10.2f}{i['p99_ms']:>10.2f}{lo['p50_ms']:>10.2f}{lo['p99_ms']:>10.2f}"
            f"{lo['max_ms']:>10.1f}{lo['p99_ms'] / i['p99_ms']:>11.2f}"
        )
    print(f"SIGTERM under load to exit (stop and final flush): {loaded['sigterm_secs']:.2f} s")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
