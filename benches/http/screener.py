"""The screener over HTTP (issue 25), side by side in one run:

    python -m benches.http.screener [--quick] [--json PATH]

A real ``spine node`` (simulated venue at 600x, 48 instruments, so closes arrive all the
time) and a real ``spine screener`` over it, on loopback ports, each waited for with a
bounded, failing readiness check; then:

1. ``POST /v2/screener/screen`` with a fixed three-condition definition, a two-key sort and a
   top 50, driven by wrk (a Lua script carries the body): req/s and latency, against FastAPI
   on uvicorn answering the same screen with polars over a DataFrame of the screener's rows
   (fetched from its snapshot, and checked to rank the same rows as Spine at the same
   version first). Spine's screener folds the live closes meanwhile; the rival's rows stand
   still.
2. The screener's stream (``GET /v2/stream/screener``) to 100 subscribers on raw sockets:
   events delivered per second, and drops (streams ended early, subscribers behind the
   others), against the node's ``GET /v2/stream/bars`` to 100 subscribers in the same run,
   the reference ceiling. Deltas carry venue time on the SIM clock, so no latency is taken.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import uvloop

from benches.bench_screen import DEFINITION
from benches.http import wrk
from benches.http.node import CONFIG, START_NS, wait_hydrated
from benches.http.procs import HOST, environment, free_port, get, python, serving
from benches.http.screener_rival import load, screen
from benches.http.servers import uvicorn_argv

FULL = {"wrk_seconds": 10.0, "repeats": 3, "connections": 32, "subscribers": 100, "stream_seconds": 10.0}
QUICK = FULL | {"wrk_seconds": 3.0, "repeats": 1, "stream_seconds": 4.0}
SPEED = 600.0
#: The definition of ``benches/bench_screen.py`` (3 conditions, 2 sort keys, top 50).
BODY = json.dumps(DEFINITION)


@contextlib.contextmanager
def node(work: Path, minutes: int = 1_500, timeout: float = 180.0) -> Iterator[str]:
    port = free_port()
    config = work / "node.toml"
    config.write_text(
        CONFIG.format(minutes=minutes, port=port, start=START_NS).replace("speed = 1.0", f"speed = {SPEED:g}")
    )
    base = f"http://{HOST}:{port}"
    argv = python("-m", "spine.cli", "node", "--config", str(config))
    with serving(
        "spine-node",
        argv,
        base + "/v2/health",
        work,
        env=environment(SPINE_DATA_DIR=str(work / "node")),
        timeout=timeout,
    ):
        wait_hydrated(base, timeout)
        yield base


@contextlib.contextmanager
def screener(work: Path, node_base: str, timeout: float = 180.0) -> Iterator[str]:
    port = free_port()
    base = f"http://{HOST}:{port}"
    argv = python(
        "-m", "spine.cli", "screener", "--port", str(port), "--data-dir", str(work / "screener"), "--node", node_base
    )
    with serving("spine-screener", argv, base + "/v2/health", work, env=environment(), timeout=timeout):
        deadline = time.monotonic() + timeout
        while True:
            health = _json(base + "/v2/screener/health")
            if health["process_state"] == "RUNNING" and health["processed"] > 0:
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"spine screener at {base} not RUNNING and folding within {timeout:.0f} s: {health}")
            time.sleep(0.2)
        yield base


def _json(url: str) -> Any:
    status, body = get(url)
    if status != 200:
        raise RuntimeError(f"{url} answered {status}: {body[:300]!r}")
    return json.loads(body)


def _post(url: str, body: str) -> Any:
    import urllib.request

    request = urllib.request.Request(url, body.encode(), {"content-type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def snapshot_rows(base: str, path: Path, tries: int = 100) -> Path:
    """The screener's rows at one version, written to ``path``, once Spine's screen of them
    ranks the same rows as the rival's and matches at least one (rows fold on meanwhile: retried
    until a snapshot, the screen and the next snapshot stand at one version, and until the
    simulated market stands where the definition matches something)."""
    unmatched = 0
    for _ in range(tries):
        first = _json(base + "/v2/screener/snapshot?limit=1000")
        rows = list(first["rows"])
        page = first
        while page["next_cursor"] is not None:
            page = _json(base + f"/v2/screener/snapshot?limit=1000&cursor={page['next_cursor']}")
            rows += page["rows"]
        answer = _post(base + "/v2/screener/screen", BODY)
        if _json(base + "/v2/screener/snapshot?limit=1")["sequence"] != first["sequence"]:
            continue
        path.write_text(json.dumps(rows))
        frame, scales, _ = load(path)
        ours = (
            [(r["instrument_id"], r["resolution"], r["rank"]) for r in answer["rows"]],
            answer["evaluated"],
            answer["matched"],
        )
        theirs = screen(frame, scales, DEFINITION)
        if ours != theirs:
            raise AssertionError(f"the rival ranks other rows than spine:\n{ours}\n{theirs}")
        if answer["rows"]:
            return path
        unmatched += 1
        time.sleep(0.1)  # the venue runs at 600x: a few simulated minutes pass before the next look
    raise RuntimeError(
        f"no snapshot in {tries} checks stood still and matched rows ({unmatched} matched none): nothing to measure"
    )


def lua(work: Path) -> Path:
    script = work / "screen.lua"
    script.write_text(
        f'wrk.method = "POST"\nwrk.body = {json.dumps(BODY)}\nwrk.headers["Content-Type"] = "application/json"\n'
    )
    return script


# the streams


class Counter(asyncio.Protocol):
    def __init__(self, request: bytes, mark: bytes) -> None:
        self.request, self.mark = request, mark
        self.events = self.warm = 0
        self.counting = False
        self.ended = False
        self.tail = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.write(self.request)  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        buffer = self.tail + data
        # A mark split across reads is counted once: keep the bytes that could start one.
        self.tail = buffer[-len(self.mark) + 1 :]
        n = buffer.count(self.mark) - self.tail.count(self.mark)
        if self.counting:
            self.events += n
        else:
            self.warm += n

    def connection_lost(self, exc: Exception | None) -> None:
        self.ended = True


async def _stream(port: int, path: str, mark: bytes, subscribers: int, seconds: float) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    request = f"GET {path} HTTP/1.1\r\nHost: {HOST}:{port}\r\nAccept: text/event-stream\r\n\r\n".encode()
    made = await asyncio.gather(
        *(loop.create_connection(lambda: Counter(request, mark), HOST, port) for _ in range(subscribers))
    )
    counters = [protocol for _, protocol in made]
    try:
        await asyncio.sleep(2.0)  # the connect rows and the first turns go uncounted
        for counter in counters:
            counter.counting = True
        started = time.monotonic()
        await asyncio.sleep(seconds)
        elapsed = time.monotonic() - started
        counts = [counter.events for counter in counters]
    finally:
        for transport, _ in made:
            transport.close()
    return {
        "subscribers": subscribers,
        "seconds": round(elapsed, 3),
        "delivered": sum(counts),
        "events_per_s": round(sum(counts) / elapsed),
        "per_subscriber_per_s": round(statistics.median(counts) / elapsed, 1),
        "min_events": min(counts),
        "max_events": max(counts),
        "ended": sum(counter.ended for counter in counters),
    }


def stream(base: str, path: str, mark: bytes, subscribers: int, seconds: float) -> dict[str, Any]:
    return uvloop.run(_stream(int(base.rsplit(":", 1)[1]), path, mark, subscribers, seconds))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="3 s wrk runs, one repeat, 4 s streams")
    parser.add_argument("--json", type=Path, help="write the runs and the summary here")
    args = parser.parse_args(argv)
    setup = QUICK if args.quick else FULL
    try:
        wrk.require()
    except wrk.WrkMissing as missing:
        print(f"benches.http.screener: {missing}", file=sys.stderr)
        return 2
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="spine-bench-screener-") as tmp:
        work = Path(tmp)
        with node(work) as node_base, screener(work, node_base) as screener_base:
            rows = snapshot_rows(screener_base, work / "rows.json")
            env = environment(SPINE_BENCH_SCREENER_ROWS=str(rows))
            port = free_port()
            rival_argv = uvicorn_argv("benches.http.screener_rival:app")(port)
            rival = f"http://{HOST}:{port}"
            script = lua(work)
            with serving("fastapi-polars", rival_argv, rival + "/v2/health", work, env=env):
                for repeat in range(setup["repeats"]):
                    for server, base in (("spine", screener_base), ("fastapi+polars", rival)):
                        result = wrk.run(
                            base + "/v2/screener/screen", setup["wrk_seconds"], setup["connections"], script=script
                        )
                        runs.append({"case": "screen", "server": server, "repeat": repeat, **result})
                        print(f"  screen {server} #{repeat + 1}: {result}", file=sys.stderr, flush=True)
            for repeat in range(setup["repeats"]):
                for server, base, path, mark in (
                    ("screener stream", screener_base, "/v2/stream/screener", b"\n\n"),
                    ("node bars stream", node_base, "/v2/stream/bars", b"\n\n"),
                ):
                    result = stream(base, path, mark, setup["subscribers"], setup["stream_seconds"])
                    runs.append({"case": "stream", "server": server, "repeat": repeat, **result})
                    print(f"  stream {server} #{repeat + 1}: {result}", file=sys.stderr, flush=True)
            health = _json(screener_base + "/v2/screener/health")
    summary = _summary(runs)
    print(_table(summary, setup, health))
    if args.json:
        args.json.write_text(
            json.dumps({"setup": setup, "summary": summary, "runs": runs, "screener_health": health}, indent=1)
        )
    return 0


def _summary(runs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for server in dict.fromkeys(r["server"] for r in runs):
        mine = [r for r in runs if r["server"] == server]
        metrics = (
            ("rps", "p50_ms", "p99_ms")
            if mine[0]["case"] == "screen"
            else ("events_per_s", "per_subscriber_per_s", "min_events", "max_events", "ended")
        )
        out[server] = {m: statistics.median(r[m] for r in mine) for m in metrics} | {"runs": len(mine)}
    return out


def _table(summary: dict[str, dict[str, Any]], setup: dict[str, Any], health: dict[str, Any]) -> str:
    spine, rival = summary["spine"], summary["fastapi+polars"]
    screener_stream, bars = summary["screener stream"], summary["node bars stream"]
    return "\n".join(
        [
            f"POST /v2/screener/screen, wrk -t1 -c{setup['connections']} -d{setup['wrk_seconds']:g}s, "
            f"median of {setup['repeats']}:",
            f"  spine screener   {spine['rps']:>9,.0f} req/s  "
            f"p50 {spine['p50_ms']:.2f} ms  p99 {spine['p99_ms']:.2f} ms",
            f"  fastapi+polars   {rival['rps']:>9,.0f} req/s  "
            f"p50 {rival['p50_ms']:.2f} ms  p99 {rival['p99_ms']:.2f} ms",
            f"  spine x{spine['rps'] / rival['rps']:.2f} the req/s",
            f"streams to {setup['subscribers']} subscribers for {setup['stream_seconds']:g} s, "
            f"median of {setup['repeats']}:",
            *(
                f"  {name:<17}{m['events_per_s']:>9,.0f} events/s  ({m['per_subscriber_per_s']:,.1f} per subscriber; "
                f"min {m['min_events']:,} max {m['max_events']:,} per subscriber; ended early {m['ended']})"
                for name, m in (("screener stream", screener_stream), ("node bars stream", bars))
            ),
            f"screener health after: connections {health['connections']} egress {health['egress']}",
        ]
    )


if __name__ == "__main__":
    sys.exit(main())
