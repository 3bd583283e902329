"""The gateway's relay (issue 26), side by side in one run:

    python -m benches.http.gateway [--quick] [--json PATH]

A real ``spine node`` (simulated venue, real time, 5,000 minutes hydrated) and a real ``spine
gateway`` in front of it on loopback ports, each waited for with a bounded, failing readiness
check. wrk then asks the same 500-bar 1-minute page of the node directly and through the
gateway, runs interleaved so drift on a shared host falls on both alike; the bodies are
checked equal byte for byte first. Target: the gateway at least 0.8x the node's requests per
second (it relays the node's bytes, never decodes and re-encodes them).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benches.http import wrk
from benches.http.node import spine_node
from benches.http.pages import PATHS
from benches.http.procs import HOST, environment, free_port, get, python, serving

FULL = {"wrk_seconds": 10.0, "repeats": 3, "connections": 32}
QUICK = FULL | {"wrk_seconds": 3.0, "repeats": 1}
TARGET = 0.8


@contextlib.contextmanager
def gateway(work: Path, node_base: str, timeout: float = 120.0) -> Iterator[str]:
    """A gateway over ``node_base`` (no screener running: its routes are not measured)."""
    port = free_port()
    base = f"http://{HOST}:{port}"
    argv = python("-m", "spine.cli", "gateway", "--port", str(port), "--data-dir", str(work / "gateway"),
                  "--node", node_base, "--screener", f"http://{HOST}:{free_port()}")
    with serving("spine-gateway", argv, base + "/v2/health", work, env=environment(), timeout=timeout):
        yield base


def run(setup: dict[str, Any]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="spine-bench-gateway-") as tmp:
        work = Path(tmp)
        with spine_node(work) as node, gateway(work, node) as front:
            path = PATHS["bars_1m_500"]
            direct, relayed = get(node + path), get(front + path)
            if direct != relayed:
                raise AssertionError(f"the gateway's page differs from the node's: {direct[0]} vs {relayed[0]}")
            runs: dict[str, list[dict[str, Any]]] = {"node": [], "gateway": []}
            for _ in range(setup["repeats"]):
                for name, base in (("node", node), ("gateway", front)):
                    runs[name].append(wrk.run(base + path, setup["wrk_seconds"], setup["connections"]))
    medians = {name: {k: statistics.median(r[k] for r in rs) for k in ("rps", "p50_ms", "p99_ms")}
               for name, rs in runs.items()}
    ratio = medians["gateway"]["rps"] / medians["node"]["rps"]
    return {"setup": setup, "runs": runs, "medians": medians, "ratio": round(ratio, 3),
            "target": TARGET, "met": ratio >= TARGET}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="3 s wrk runs, one repeat")
    parser.add_argument("--json", metavar="PATH", help="write the raw runs and the summary")
    args = parser.parse_args(argv)
    result = run(QUICK if args.quick else FULL)
    for name, m in result["medians"].items():
        print(f"{name:8} 500-bar page: {m['rps']:9.0f} req/s  p50 {m['p50_ms']:.2f} ms  p99 {m['p99_ms']:.2f} ms")
    print(f"gateway / node: {result['ratio']:.3f}x (target {TARGET}x: {'met' if result['met'] else 'missed'})")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
