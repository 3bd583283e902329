"""The gateway's SSE relay measured against the node's own stream (``benches.http.gateway``).

One client process (uvloop) holds ``--subscribers`` raw-socket subscribers to one stream and,
inside a window after a warm-up, records each read as four integers: its receipt time, the
first and the last event in it (keys interned to small integers) and how many events it
holds. Meanwhile the bench's own process holds one reference subscriber straight to the
node and keeps its reads raw. Events carry venue time on the SIM clock, not wall time, so
delay is measured between subscribers, on one monotonic clock:

- against the reference: receipt at each subscriber minus receipt at the reference, per
  (subscriber, event); through the gateway, the relay's added delay;
- spread: per event, its last subscriber's receipt minus its first's.

A read of ``n`` events whose first and last are ``n - 1`` apart in the reference's order
holds exactly those events (the hub keeps order; a gap means its queue dropped some), so
every event of it gets the read's receipt time; a read with a gap gives its two ends only.

    python -m benches.http.sse_relay PORT PATH --subscribers 1000 --warmup 2 --seconds 10 --out FILE
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
from array import array
from pathlib import Path
from typing import Any

import numpy as np
import uvloop

from benches.http.procs import HOST, ROOT, environment, python
from benches.http.sse_client import open_subscribers, stream_request

#: The quote stream's events: the highest steady event rate of the node's three streams.
PATH = "/v2/stream/quotes"
MARK = b"event: quote\n"
#: A quote is one per instrument and venue time; the key is read from its data line.
KEY = re.compile(rb'"instrument_id":"([^"]+)",.*?"ts_event":"(\d+)"')
KEY_AT = b'"instrument_id":"'
FRAME = re.compile(rb"event: quote\ndata: ([^\n]*)\n\n")


class Tally:
    """One client process's records: ``(now_ns, first, last, n)`` per read in the window."""

    def __init__(self) -> None:
        self.counting = False
        self.records = array("q")
        self.keys: dict[tuple[bytes, bytes], int] = {}
        self.refused = self.ended = 0

    def key(self, found: re.Match[bytes] | None) -> int:
        if found is None:
            return -1
        key = found.group(1, 2)
        ident = self.keys.get(key)
        if ident is None:
            ident = self.keys[key] = len(self.keys)
        return ident

    def take(self, buffer: bytes, cut: int) -> None:
        if self.counting:
            self.add(time.monotonic_ns(), buffer, cut)

    def add(self, now: int, frames: bytes, cut: int) -> None:
        n = frames.count(MARK, 0, cut)
        if n:
            last = KEY.match(frames, frames.rfind(KEY_AT, 0, cut), cut)
            self.records.extend((now, self.key(KEY.search(frames, 0, cut)), self.key(last), n))


async def client(port: int, path: str, n: int, warmup: float, seconds: float, out: Path) -> None:
    tally = Tally()
    subscribers = await open_subscribers(port, stream_request(port, path), n, tally)
    try:
        await asyncio.sleep(warmup)  # the connect rows and the first turns go unrecorded
        tally.counting, start = True, time.monotonic_ns()
        await asyncio.sleep(seconds)
        tally.counting, end = False, time.monotonic_ns()
        ended = tally.ended
    finally:
        for subscriber in subscribers:
            if subscriber.transport is not None:
                subscriber.transport.close()
    out.with_suffix(".bin").write_bytes(tally.records.tobytes())
    keys = [[i.decode(), ts.decode()] for i, ts in tally.keys]
    out.write_text(
        json.dumps(
            {"subscribers": n, "start_ns": start, "end_ns": end, "refused": tally.refused, "ended": ended, "keys": keys}
        )
    )


# the bench's side: the reference subscriber, the run, the figures


class Reference(asyncio.Protocol):
    """One subscriber straight to the node; every read kept raw with its receipt time."""

    def __init__(self, request: bytes) -> None:
        self.request, self.tail = request, b""
        self.reads: list[tuple[int, bytes]] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.write(self.request)  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        now = time.monotonic_ns()
        buffer = self.tail + data if self.tail else data
        cut = buffer.rfind(b"\n\n") + 2
        self.tail = buffer[cut:] if cut >= 2 else buffer
        if cut >= 2:
            self.reads.append((now, buffer[:cut]))

    def events(self) -> tuple[dict[tuple[str, str], int], np.ndarray]:
        """Every event's key -> its index in the stream's order, and receipt times by index."""
        order: dict[tuple[str, str], int] = {}
        times: list[int] = []
        for now, frames in self.reads:
            for found in KEY.finditer(frames):
                key = (found.group(1).decode(), found.group(2).decode())
                if key in order:
                    raise AssertionError(f"the reference received {key} twice: the key is not unique")
                order[key] = len(times)
                times.append(now)
        return order, np.array(times, dtype=np.int64)


async def _side(node_port: int, port: int, n: int, warmup: float, seconds: float, out: Path) -> Reference:
    loop = asyncio.get_running_loop()
    transport, reference = await loop.create_connection(
        lambda: Reference(stream_request(node_port, PATH)), HOST, node_port
    )
    try:
        argv = python(
            "-m",
            "benches.http.sse_relay",
            str(port),
            PATH,
            "--subscribers",
            str(n),
            "--warmup",
            f"{warmup:g}",
            "--seconds",
            f"{seconds:g}",
            "--out",
            str(out),
        )
        process = await asyncio.create_subprocess_exec(
            *argv, cwd=ROOT, env=environment(), stdin=asyncio.subprocess.DEVNULL
        )
        try:
            if await asyncio.wait_for(process.wait(), warmup + seconds + 120):
                raise RuntimeError(f"the sse relay client exited {process.returncode} (port {port})")
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
    finally:
        transport.close()
    return reference


def side(node_port: int, port: int, n: int, warmup: float, seconds: float, out: Path) -> dict[str, Any]:
    """One measured side: ``n`` subscribers on ``port``'s stream, a reference on the node's."""
    reference = uvloop.run(_side(node_port, port, n, warmup, seconds, out))
    return figures(
        reference,
        json.loads(out.read_text()),
        np.frombuffer(out.with_suffix(".bin").read_bytes(), dtype=np.int64).reshape(-1, 4),
    )


def figures(reference: Reference, run: dict[str, Any], records: np.ndarray) -> dict[str, Any]:
    order, ref_times = reference.events()
    to_ref = np.array([order.get((i, ts), -1) for i, ts in run["keys"]] or [0], dtype=np.int64)
    now, first, last, n = records.T
    i0, i1 = to_ref[first], to_ref[last]
    whole = (i0 >= 0) & (i1 >= 0) & (i1 - i0 + 1 == n)
    # Every event of a whole read; the two ends of a read with a gap (its queue dropped some).
    counts = n[whole]
    base = np.repeat(i0[whole] - np.cumsum(counts) + counts, counts)
    events = np.concatenate([base + np.arange(counts.sum()), i0[~whole], i1[~whole]])
    received = np.concatenate([np.repeat(now[whole], counts), now[~whole], now[~whole]])
    kept = events >= 0
    events, received = events[kept], received[kept]
    against = received - ref_times[events]
    # Spread over the events every subscriber received inside the window (first to last).
    per_event = np.bincount(events, minlength=len(ref_times))
    latest = np.full(len(ref_times), np.iinfo(np.int64).min)
    earliest = np.full(len(ref_times), np.iinfo(np.int64).max)
    np.maximum.at(latest, events, received)
    np.minimum.at(earliest, events, received)
    full = per_event >= run["subscribers"]
    spread = latest[full] - earliest[full]
    window = (run["end_ns"] - run["start_ns"]) / 1e9
    in_window = int(((ref_times >= run["start_ns"]) & (ref_times < run["end_ns"])).sum())
    delivered = int(n.sum())
    return {
        "subscribers": run["subscribers"],
        "seconds": round(window, 3),
        "delivered": delivered,
        "deliveries_per_s": round(delivered / window),
        "source_events_per_s": round(in_window / window),
        "delivered_share": round(delivered / (in_window * run["subscribers"]), 4) if in_window else None,
        "reads": len(records),
        "reads_with_gaps": int((~whole).sum()),
        "refused": run["refused"],
        "ended": run["ended"],
        "delay_samples": len(against),
        "delay_p50_ms": _ms(against, 50),
        "delay_p99_ms": _ms(against, 99),
        "spread_events": len(spread),
        "spread_p50_ms": _ms(spread, 50),
        "spread_p99_ms": _ms(spread, 99),
    }


def _ms(values: np.ndarray, q: float) -> float | None:
    return round(float(np.percentile(values, q, method="inverted_cdf")) / 1e6, 3) if len(values) else None


# the check before timing


async def _collect(ports: list[int], seconds: float) -> list[bytes]:
    loop = asyncio.get_running_loop()
    made = [await loop.create_connection(lambda p=p: Reference(stream_request(p, PATH)), HOST, p) for p in ports]
    await asyncio.sleep(seconds)
    for transport, _ in made:
        transport.close()
    return [b"".join(frames for _, frames in protocol.reads) for _, protocol in made]


def same_events(node_port: int, gateway_port: int, seconds: float = 3.0, least: int = 500) -> int:
    """Both streams read side by side for ``seconds``: over the events both received, the
    gateway's data lines must be the node's, byte for byte and in order. Returns how many."""
    node, gateway = (
        [m.group(1) for m in FRAME.finditer(raw)] for raw in uvloop.run(_collect([node_port, gateway_port], seconds))
    )
    if not gateway or gateway[0] not in node:
        raise AssertionError("the gateway's first quote never reached the node's subscriber")
    start = node.index(gateway[0])
    both = min(len(node) - start, len(gateway))
    if node[start : start + both] != gateway[:both]:
        raise AssertionError("the gateway's quotes differ from the node's over the window both received")
    if both < least:
        raise AssertionError(f"only {both} quotes received through both: nothing much compared")
    return both


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("port", type=int)
    parser.add_argument("path")
    parser.add_argument("--subscribers", type=int, default=1_000)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    uvloop.run(client(args.port, args.path, args.subscribers, args.warmup, args.seconds, args.out))


if __name__ == "__main__":
    sys.exit(main())
