"""The gateway's relay (issue 26), side by side in one run:

    python -m benches.http.gateway [--quick] [--json PATH]

A real ``spine node`` (simulated venue, real time, 5,000 minutes hydrated) and a real ``spine
gateway`` in front of it on loopback ports, each waited for with a bounded, failing readiness
check. wrk then asks the same 500-bar 1-minute page of the node directly and through the
gateway, runs interleaved so drift on a shared host falls on both alike; the bodies are
checked equal byte for byte first. Target: the gateway at least 0.8x the node's requests per
second (it relays the node's bytes, never decodes and re-encodes them).

Then the streams, on a second node with the venue at 600x and a gateway over it: 1,000
subscribers to the node's ``/v2/stream/quotes`` (the busiest of its three streams), then
1,000 to the gateway's, repeats alternated, each side one client process (uvloop) and one
reference subscriber straight to the node held by this process (:mod:`benches.http.sse_relay`).
Deliveries per second, and delay on one monotonic clock (quotes carry SIM venue time): per
event and subscriber against the reference (through the gateway, the relay's added delay),
and per event its first to last subscriber (the spread). Before timing, the gateway's quotes
are checked to be the node's, same data lines byte for byte, over a 3-second window.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from benches.http import sse_relay, wrk
from benches.http.node import spine_node
from benches.http.pages import PATHS
from benches.http.procs import HOST, environment, free_port, get, python, serving

FULL = {
    "wrk_seconds": 10.0,
    "repeats": 3,
    "connections": 32,
    "subscribers": 1_000,
    "stream_seconds": 10.0,
    "stream_warmup": 3.0,
    "stream_repeats": 3,
    "speed": 600.0,
}
QUICK = FULL | {"wrk_seconds": 3.0, "repeats": 1, "stream_repeats": 1}
TARGET = 0.8
#: Figures of a stream side whose median is taken.
STREAM_FIGURES = (
    "deliveries_per_s",
    "source_events_per_s",
    "delivered_share",
    "delay_p50_ms",
    "delay_p99_ms",
    "spread_p50_ms",
    "spread_p99_ms",
    "reads_with_gaps",
    "ended",
    "refused",
)


@contextlib.contextmanager
def gateway(work: Path, node_base: str, timeout: float = 120.0) -> Iterator[str]:
    """A gateway over ``node_base`` (no screener running: its routes are not measured)."""
    port = free_port()
    base = f"http://{HOST}:{port}"
    argv = python(
        "-m",
        "spine.cli",
        "gateway",
        "--port",
        str(port),
        "--data-dir",
        str(work / "gateway"),
        "--node",
        node_base,
        "--screener",
        f"http://{HOST}:{free_port()}",
    )
    with serving("spine-gateway", argv, base + "/v2/health", work, env=environment(), timeout=timeout):
        yield base


def wait_feed(front: str, path: str, timeout: float = 60.0) -> None:
    """Bounded wait for the gateway's feed of ``path`` to be connected and relaying."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        feeds = [f for u in json.loads(get(front + "/v2/status")[1])["upstreams"] for f in u.get("streams", [])]
        if any(f["path"] == path and f["connected"] and f["events"] for f in feeds):
            return
        time.sleep(0.2)
    raise TimeoutError(f"the gateway at {front}: its {path} feed not relaying within {timeout:.0f} s")


def streams(setup: dict[str, Any]) -> dict[str, Any]:
    """The SSE relay: node and gateway sides alternated, each ``stream_repeats`` times."""
    with tempfile.TemporaryDirectory(prefix="spine-bench-gateway-sse-") as tmp:
        work = Path(tmp)
        with spine_node(work, minutes=1_500, timeout=180.0, speed=setup["speed"]) as node, gateway(work, node) as front:
            wait_feed(front, sse_relay.PATH)
            node_port, front_port = (int(base.rsplit(":", 1)[1]) for base in (node, front))
            checked = sse_relay.same_events(node_port, front_port)
            runs: dict[str, list[dict[str, Any]]] = {"node": [], "gateway": []}
            for repeat in range(setup["stream_repeats"]):
                for name, port in (("node", node_port), ("gateway", front_port)):
                    result = sse_relay.side(
                        node_port,
                        port,
                        setup["subscribers"],
                        setup["stream_warmup"],
                        setup["stream_seconds"],
                        work / f"{name}-{repeat}.json",
                    )
                    runs[name].append(result)
                    print(f"  stream {name} #{repeat + 1}: {result}", file=sys.stderr, flush=True)
            status = json.loads(get(front + "/v2/status")[1])
    medians = {name: {k: _median(r[k] for r in rs) for k in STREAM_FIGURES} for name, rs in runs.items()}
    ratio = medians["gateway"]["deliveries_per_s"] / medians["node"]["deliveries_per_s"]
    return {
        "path": sse_relay.PATH,
        "checked_events": checked,
        "runs": runs,
        "medians": medians,
        "ratio": round(ratio, 3),
        "gateway_status": status,
    }


def _median(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


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
    medians = {
        name: {k: statistics.median(r[k] for r in rs) for k in ("rps", "p50_ms", "p99_ms")} for name, rs in runs.items()
    }
    ratio = medians["gateway"]["rps"] / medians["node"]["rps"]
    return {
        "setup": setup,
        "runs": runs,
        "medians": medians,
        "ratio": round(ratio, 3),
        "target": TARGET,
        "met": ratio >= TARGET,
        "streams": streams(setup),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="3 s wrk runs, one repeat of each")
    parser.add_argument("--json", metavar="PATH", help="write the raw runs and the summary")
    parser.add_argument(
        "--speed",
        type=float,
        default=FULL["speed"],
        help="the stream node's SIM speed (600: every side saturated; 60: neither)",
    )
    args = parser.parse_args(argv)
    result = run((QUICK if args.quick else FULL) | {"speed": args.speed})
    for name, m in result["medians"].items():
        print(f"{name:8} 500-bar page: {m['rps']:9.0f} req/s  p50 {m['p50_ms']:.2f} ms  p99 {m['p99_ms']:.2f} ms")
    print(f"gateway / node: {result['ratio']:.3f}x (target {TARGET}x: {'met' if result['met'] else 'missed'})")
    sse = result["streams"]
    print(
        f"{sse['path']} to {result['setup']['subscribers']:,} subscribers ({sse['checked_events']} events checked "
        f"equal first), median of {result['setup']['stream_repeats']}:"
    )
    for name, m in sse["medians"].items():
        print(
            f"{name:8} {m['deliveries_per_s']:>11,.0f} deliveries/s ({m['delivered_share']:.1%} of "
            f"{m['source_events_per_s']:,.0f} events/s x subscribers)  against the reference p50 "
            f"{m['delay_p50_ms']} ms p99 {m['delay_p99_ms']} ms  spread p50 {m['spread_p50_ms']} ms "
            f"p99 {m['spread_p99_ms']} ms"
        )
    print(f"gateway / node deliveries: {sse['ratio']:.3f}x")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
