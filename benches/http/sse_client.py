"""The SSE load client: subscribers on raw asyncio sockets (uvloop), work kept to bytes
operations so the client is not the bottleneck. Complete frames are counted with
``bytes.count``; the publish time in each bar's ``ts_event`` gives the publish-to-receipt
delay (of every event when paced, of the first event of each read when flat out).

``run_clients`` splits the subscribers over a few client processes (one process reading a
whole 1,000-subscriber sweep would add its own read time to the measured delay). One of them
waits until the server holds every subscription, then triggers the publisher. Each counts
deliveries inside the same window, anchored on the first event's publish time and skipping
``warmup`` seconds.

    python -m benches.http.sse_client PORT --subscribers 500 --rate 0 --seconds 4.5 [--trigger N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Protocol

import uvloop

from benches.http.procs import HOST, ROOT, environment, python

MARK = b"event: bar\n"
TS = re.compile(rb'"bars":\[\{"sequence":\d+,"ts_event":"(\d+)"')


class Tally:
    """Counts shared by one process's subscribers. Paced, every read is kept raw with its
    receipt time and parsed after the run, so a read costs the client next to nothing."""

    def __init__(self, every_delay: bool, warmup: float, seconds: float) -> None:
        self.every_delay, self.warmup_ns, self.seconds_ns = every_delay, int(warmup * 1e9), int(seconds * 1e9)
        self.total = self.window = self.refused = self.ended = 0
        self.anchor_ns = self.first_ns = self.last_ns = 0
        self.delays: list[int] = []
        self.raw: list[tuple[int, bytes]] = []

    def take(self, buffer: bytes, cut: int) -> None:
        self.add(buffer[:cut])

    def add(self, frames: bytes) -> None:
        now = time.time_ns()
        if not self.anchor_ns:
            stamps = TS.findall(frames, 0, frames.find(b"\n\n"))
            if not stamps:
                return
            self.anchor_ns = int(stamps[0])  # the first event's publish time: same in every process
            self.first_ns = now
        self.last_ns = now
        if self.every_delay:
            self.raw.append((now, frames))
        else:
            self.count(now, frames, TS.findall(frames, 0, frames.find(b"\n\n")))

    def count(self, now: int, frames: bytes, stamps: list[bytes]) -> None:
        n = frames.count(MARK)
        self.total += n
        if self.warmup_ns <= now - self.anchor_ns < self.seconds_ns:
            self.window += n
        self.delays.extend(now - int(ts) for ts in stamps)

    def finish(self) -> None:
        """Parse the reads kept raw (paced runs)."""
        for now, frames in self.raw:
            self.count(now, frames, TS.findall(frames))
        self.raw.clear()


class FrameSink(Protocol):
    """What a :class:`Subscriber` reports to: its refusals, its ends, and its whole frames."""

    refused: int
    ended: int

    def take(self, buffer: bytes, cut: int) -> None:
        """``buffer[:cut]`` holds whole frames (``cut`` >= 2)."""


class Subscriber(asyncio.Protocol):
    """One SSE subscription on a raw socket: its response's status counted as refused unless
    200, its bytes cut at the last frame end and handed on whole (shared by the bench clients)."""

    def __init__(self, tally: FrameSink, request: bytes) -> None:
        self.tally, self.request, self.tail = tally, request, b""
        self.transport: asyncio.BaseTransport | None = None
        self.headed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        transport.write(self.request)  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        if not self.headed:
            self.headed = True
            self.tally.refused += not data.startswith(b"HTTP/1.1 200")
        buffer = self.tail + data if self.tail else data
        cut = buffer.rfind(b"\n\n") + 2
        if cut < 2:
            self.tail = buffer
            return
        self.tail = buffer[cut:]
        self.tally.take(buffer, cut)

    def connection_lost(self, exc: Exception | None) -> None:
        self.tally.ended += 1


def stream_request(port: int, path: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: {HOST}:{port}\r\nAccept: text/event-stream\r\n\r\n".encode()


async def open_subscribers(port: int, request: bytes, n: int, tally: FrameSink) -> list[Subscriber]:
    """``n`` subscribers, connected 100 at a time (a burst of 1,000 SYNs can overflow a small
    accept queue)."""
    loop = asyncio.get_running_loop()
    subscribers: list[Subscriber] = []
    for batch in range(0, n, 100):
        made = await asyncio.gather(
            *(
                loop.create_connection(lambda: Subscriber(tally, request), HOST, port)
                for _ in range(min(100, n - batch))
            )
        )
        subscribers += [protocol for _, protocol in made]
    return subscribers


async def control(port: int, path: str, timeout: float) -> dict[str, float]:
    """One GET on its own connection; the JSON body (plain or one chunk)."""
    reader, writer = await asyncio.open_connection(HOST, port)
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {HOST}:{port}\r\nConnection: close\r\n\r\n".encode())
        head, body = (await asyncio.wait_for(reader.read(), timeout)).split(b"\r\n\r\n", 1)
    finally:
        writer.close()
    if b"transfer-encoding: chunked" in head.lower():
        body = body.split(b"\r\n", 1)[1].rsplit(b"\r\n0\r\n", 1)[0]
    return json.loads(body)


async def trigger(port: int, total: int, rate: float, seconds: float, burst: int = 1, timeout: float = 60.0) -> int:
    """Once the server holds ``total`` subscriptions, publish; returns the events published."""
    deadline = time.monotonic() + timeout
    while (await control(port, "/bench/subscribers", 10))["subscribers"] < total:
        if time.monotonic() > deadline:
            raise TimeoutError(f"fewer than {total} subscriptions registered after {timeout:.0f} s")
        await asyncio.sleep(0.1)
    path = f"/bench/publish?rate={rate:g}&seconds={seconds:g}&burst={burst}"
    return int((await control(port, path, seconds + 60))["published"])


async def settle(tally: Tally, seconds: float, timeout: float = 90.0) -> None:
    """Wait for the first event, the end of publishing, then stragglers (quiet for 1 s)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        now = time.time_ns()
        if tally.anchor_ns and now - tally.anchor_ns > seconds * 1e9 and now - tally.last_ns > 1e9:
            return
        await asyncio.sleep(0.1)


async def measure(
    port: int, n: int, rate: float, seconds: float, warmup: float, total: int, burst: int = 1
) -> dict[str, object]:
    tally = Tally(rate > 0, warmup, seconds)
    subscribers = await open_subscribers(port, stream_request(port, "/v2/stream/bars"), n, tally)
    try:
        published = await trigger(port, total, rate, seconds, burst) if total else None
        await settle(tally, seconds)
        tally.finish()
    finally:
        for subscriber in subscribers:
            if subscriber.transport is not None:
                subscriber.transport.close()
    return {
        "subscribers": n,
        "published": published,
        "delivered": tally.total,
        "window": tally.window,
        "first_ns": tally.first_ns,
        "last_ns": tally.last_ns,
        "refused": tally.refused,
        "delays_ns": tally.delays,
    }


def run_clients(
    port: int, subscribers: int, rate: float, seconds: float, warmup: float = 0.5, processes: int = 2, burst: int = 1
) -> dict[str, object]:
    """Split ``subscribers`` over ``processes`` clients; the merged figures."""
    shares = [subscribers // processes + (k < subscribers % processes) for k in range(processes)]
    argv = python(
        "-m",
        "benches.http.sse_client",
        str(port),
        "--rate",
        f"{rate:g}",
        "--seconds",
        f"{seconds:g}",
        "--warmup",
        f"{warmup:g}",
        "--burst",
        str(burst),
    )
    # Results go through files: a client blocked on a full stdout pipe while the parent waits
    # on another one fails its write.
    with tempfile.TemporaryDirectory() as tmp:
        outs = [Path(tmp) / f"client-{k}.json" for k in range(processes)]
        clients = []
        for k, (share, out) in enumerate(zip(shares, outs, strict=True)):
            lead = ["--trigger", str(subscribers)] if k == 0 else []
            with out.open("wb") as sink:
                clients.append(
                    subprocess.Popen(
                        [*argv, "--subscribers", str(share), *lead],
                        cwd=ROOT,
                        env=environment(),
                        stdout=sink,
                        stdin=subprocess.DEVNULL,
                    )
                )
        try:
            for client in clients:
                if client.wait(seconds + 180):
                    raise RuntimeError(f"sse client exited {client.returncode} (port {port})")
        finally:
            for client in clients:
                if client.poll() is None:
                    client.kill()
                    client.wait()
        results = [json.loads(out.read_bytes()) for out in outs]
    return merge(results, seconds - warmup)


def merge(results: list[dict], window: float) -> dict[str, object]:
    """One figure set over the client processes. Two rates: ``window_per_s`` counts what
    arrived inside the publish-anchored window (a server whose sends queue up behind its
    publisher scores near zero there), ``deliveries_per_s`` what arrived over the span of
    receipts, first to last (the sustained delivery rate, the figure compared)."""
    delays = sorted(d for r in results for d in r["delays_ns"])
    published = next(r["published"] for r in results if r["published"] is not None)
    subscribers = sum(r["subscribers"] for r in results)
    delivered = sum(r["delivered"] for r in results)
    received = [r for r in results if r["first_ns"]]
    span_s = (max(r["last_ns"] for r in received) - min(r["first_ns"] for r in received)) / 1e9 if received else 0
    return {
        "subscribers": subscribers,
        "published": published,
        "expected": published * subscribers,
        "delivered": delivered,
        "refused": sum(r["refused"] for r in results),
        "deliveries_per_s": round(delivered / span_s) if span_s > 0 else 0,
        "window_per_s": round(sum(r["window"] for r in results) / window),
        "delay_samples": len(delays),
        "p50_ms": quantile_ms(delays, 0.5),
        "p99_ms": quantile_ms(delays, 0.99),
        "max_ms": quantile_ms(delays, 1.0),
    }


def quantile_ms(ordered: list[int], q: float) -> float | None:
    """The ``q`` quantile (nearest rank) of sorted nanosecond delays, in milliseconds."""
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] / 1e6, 3) if ordered else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("port", type=int)
    parser.add_argument("--subscribers", type=int, default=1_000)
    parser.add_argument("--rate", type=float, default=0.0, help="events per second; 0: flat out")
    parser.add_argument("--seconds", type=float, default=4.5)
    parser.add_argument("--burst", type=int, default=1, help="flat out: events published per loop turn")
    parser.add_argument("--warmup", type=float, default=0.5)
    parser.add_argument(
        "--trigger",
        type=int,
        default=0,
        metavar="TOTAL",
        help="trigger the publisher once the server holds TOTAL subscriptions",
    )
    args = parser.parse_args()
    result = uvloop.run(
        measure(args.port, args.subscribers, args.rate, args.seconds, args.warmup, args.trigger, args.burst)
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
