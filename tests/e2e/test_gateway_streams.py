"""The gateway's streams over a real node and screener (loopback subprocesses): bars, quotes
and trades through the gateway's hub are the node's own events, byte for byte and in order;
filters and their refusals as on the node; 200 subscribers cost the node one subscription per
stream; a subscriber that stops reading loses its own oldest events, not the others'; the
screener's and the v1 stream relayed per subscriber; a node that stops and comes back is
followed again while the gateway serves on."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gateways import spawn_gateway
from nodes import envelope, free_port, get, restartable_node, spawn, sse, stop, wait_for
from screeners import ok, screener

from reference.wire_validator import validate

__all__ = ["screener"]  # the fixture, imported for this module's tests

IID = "BTCUSDT.SIM"
HEARTBEAT_SECS = 1.0


def status(url: str) -> dict[str, Any]:
    return ok(url + "/v2/status")


def feeds_open(url: str, connects: int = 1) -> bool:
    return all(
        s["connected"] and s["connects"] >= connects
        for u in status(url)["upstreams"]
        if u["kind"] == "node"
        for s in u["streams"]
    )


@pytest.fixture(scope="module")
def gateway(base: str, screener: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    process, url = spawn_gateway(
        tmp_path_factory.mktemp("gateway"), [base], screener, f"stream_heartbeat_secs = {HEARTBEAT_SECS}\n"
    )
    try:
        wait_for(process, lambda: feeds_open(url), "following the node's streams")
        yield url
    finally:
        out, err = stop(process)
        assert process.returncode == 0, err


class Reader(threading.Thread):
    """Collects an SSE stream's frames (``(event, data line)``) in the background."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.error: Exception | None = None
        self.response = urllib.request.urlopen(url, timeout=10)  # closed by stop()
        self.done = threading.Event()
        self.frames: list[tuple[str, bytes]] = []
        self.start()

    def run(self) -> None:
        name = ""
        try:
            for raw in self.response:
                if self.done.is_set():
                    return
                if raw.startswith(b"event: "):
                    name = raw[7:].decode().strip()
                elif raw.startswith(b"data: "):
                    self.frames.append((name, raw[6:].rstrip(b"\n")))
        except Exception as error:  # noqa: BLE001 - stop() closes the response under the read
            if not self.done.is_set():
                self.error = error

    def events(self, name: str) -> list[bytes]:
        return [data for event, data in list(self.frames) if event == name]

    def stop(self) -> None:
        self.done.set()
        self.response.close()


def same_run(ours: list[bytes], theirs: list[bytes], least: int) -> None:
    """Both saw one run of the node's events: where they overlap, the same documents in the
    same order, at least ``least`` of them."""
    common = set(ours) & set(theirs)
    assert len(common) >= least, (len(ours), len(theirs), len(common))
    a = [k for k, d in enumerate(ours) if d in common]
    b = [k for k, d in enumerate(theirs) if d in common]
    assert ours[a[0] : a[-1] + 1] == theirs[b[0] : b[-1] + 1]


@pytest.mark.parametrize(
    ("path", "event", "least"),
    [
        (f"/v2/stream/bars?instrument_id={IID}", "bar", 10),
        (f"/v2/stream/quotes?instrument_id={IID}", "quote", 50),
        (f"/v2/stream/trades?instrument_id={IID}", "trade", 50),
    ],
)
def test_the_gateway_relays_the_nodes_events(gateway: str, base: str, path: str, event: str, least: int) -> None:
    readers = [Reader(gateway + path), Reader(base + path)]
    # Bounded, not timed: a loaded host delivers fewer events a second, so read until both
    # readers share `least` events (or 60 s pass, and same_run says what was seen).
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(set(readers[0].events(event)) & set(readers[1].events(event))) < least:
        time.sleep(0.2)
    for reader in readers:
        reader.stop()
    ours, theirs = (reader.events(event) for reader in readers)
    same_run(ours, theirs, least)
    for data in ours[:20]:
        document = json.loads(data)
        validate(document)
        assert document["instrument_id"] == IID


def test_filters_apply_and_bad_ones_are_refused_as_on_the_node(gateway: str, base: str) -> None:
    for name, document in sse(gateway + f"/v2/stream/bars?instrument_id={IID}&resolution=5m&channel=INTERNAL", 3, 20):
        if name == "heartbeat":  # a quiet 5m series on a loaded host: the stream says it is alive
            validate(document)
            continue
        assert (document["instrument_id"], document["resolution"], document["channel"]) == (IID, "5m", "INTERNAL")
    events = [e for e in sse(gateway + "/v2/stream/bars?resolution=1m&channel=EXTERNAL", 40, 20) if e[0] == "bar"]
    assert {d["resolution"] for _, d in events} == {"1m"} and {d["channel"] for _, d in events} == {"EXTERNAL"}
    assert len({d["instrument_id"] for _, d in events}) > 1
    for _, document in sse(gateway + "/v2/stream/quotes?instrument_id=ETHUSDT.SIM", 5):
        assert document["instrument_id"] == "ETHUSDT.SIM"
    for query, code, symbol in [
        ("/v2/stream/bars?resolution=2m", 400, "INVALID_PARAMETER"),
        ("/v2/stream/bars?channel=LAST", 400, "INVALID_PARAMETER"),
        ("/v2/stream/bars?resolution=1s&channel=EXTERNAL", 400, "INVALID_PARAMETER"),
        ("/v2/stream/trades?instrument_id=btc", 400, "INVALID_INSTRUMENT_ID"),
    ]:
        assert envelope(get(gateway + query), code, symbol) == envelope(get(base + query), code, symbol)
    envelope(get(base + "/v2/stream/quotes?instrument_id=NOPE.SIM"), 404, "NOT_FOUND")
    assert "NOPE.SIM is not ingested on node-1, " in envelope(
        get(gateway + "/v2/stream/quotes?instrument_id=NOPE.SIM"), 404, "NOT_FOUND"
    )
    detail = envelope(get(gateway + "/v2/stream/trades?instrument_id=BTCUSDT.ELSEWHERE"), 404, "NOT_FOUND")
    assert "venue 'ELSEWHERE'" in detail


async def _subscriber(host: str, port: int, path: str, received: list[int], release: asyncio.Event) -> None:
    """Read ``path`` until its first trade, then hold the stream open until ``release``."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        while b"event: trade\n" not in await reader.readuntil(b"\n\n"):
            pass
        received.append(1)
        await release.wait()
    finally:
        writer.close()


def test_many_subscribers_share_one_upstream_subscription(gateway: str) -> None:
    host, port = gateway.removeprefix("http://").split(":")
    before = {s["path"]: s["connects"] for s in status(gateway)["upstreams"][0]["streams"]}

    async def run() -> dict[str, Any]:
        received: list[int] = []
        release = asyncio.Event()
        tasks = [
            asyncio.create_task(_subscriber(host, int(port), "/v2/stream/trades", received, release))
            for _ in range(200)
        ]
        try:
            async with asyncio.timeout(20):
                while len(received) < 200:
                    await asyncio.sleep(0.05)
            return await asyncio.to_thread(status, gateway)  # while all 200 are connected
        finally:
            release.set()
            await asyncio.gather(*tasks)

    seen = asyncio.run(run())
    assert seen["egress"]["subscribers"] >= 200
    streams = seen["upstreams"][0]["streams"]
    assert {s["path"]: s["connects"] for s in streams} == before  # no upstream stream opened for them
    assert all(s["connected"] for s in streams)


def _read_for(sock: socket.socket, seconds: float) -> bytes:
    sock.settimeout(0.2)
    out, deadline = b"", time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(1 << 16)
        except TimeoutError:
            continue
        if not chunk:
            break
        out += chunk
    return out


def test_a_subscriber_that_stops_reading_does_not_slow_the_others(gateway: str) -> None:
    """A reader with a tiny receive window stops reading: its stream is held back and its
    queue drops its oldest events (counted when it leaves), while another reader goes on."""
    host, port = gateway.removeprefix("http://").split(":")
    dropped = status(gateway)["egress"]["events_dropped"]
    fast = Reader(gateway + "/v2/stream/bars")
    try:
        for hold in (3.0, 6.0, 12.0):  # bounded: a busier host publishes as fast, or faster
            with socket.socket() as sock:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                sock.connect((host, int(port)))
                sock.sendall(f"GET /v2/stream/bars HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
                got = len(fast.frames)
                time.sleep(hold)
                assert len(fast.frames) > got + 100 * hold  # the other subscriber kept receiving
                assert _read_for(sock, 0.5)  # the slow one is still served once it reads
            wait_for_value = time.monotonic() + 5
            while status(gateway)["egress"]["events_dropped"] == dropped and time.monotonic() < wait_for_value:
                time.sleep(0.1)
            if status(gateway)["egress"]["events_dropped"] > dropped:
                break
        assert status(gateway)["egress"]["events_dropped"] > dropped, "the slow stream never lost an event"
    finally:
        fast.stop()
    assert fast.error is None


def test_the_screener_stream_is_relayed_per_subscriber(gateway: str) -> None:
    events = [(n, d) for n, d in sse(gateway + f"/v2/stream/screener?instrument_id={IID}", 14, 30) if n != "heartbeat"]
    names = [name for name, _ in events]
    assert names[:7] == ["row"] * 7 and "delta" in names[7:], names  # connect rows, then changes
    for _, document in events:
        validate(document)
        assert document["instrument_id"] == IID
    envelope(get(gateway + "/v2/stream/screener?resolution=2m"), 400, "INVALID_PARAMETER")
    envelope(get(gateway + "/v2/stream/screener?instrument_id=NOPE.SIM"), 404, "NOT_FOUND")


def test_the_v1_stream_is_relayed_with_its_cursor(gateway: str) -> None:
    first = [d for _, d in sse(gateway + f"/stream?instrument_id={IID}", 4) if "cursor" in d]
    for document in first:
        validate(document)
    cursor = int(first[0]["cursor"])
    resumed = [d for _, d in sse(gateway + f"/stream?instrument_id={IID}&cursor={cursor}", 2) if "cursor" in d]
    assert int(resumed[0]["cursor"]) > cursor and resumed[0]["document"]["instrument_id"] == IID


def test_a_stopped_node_is_followed_again_when_it_returns(tmp_path: Path, screener: str) -> None:
    (tmp_path / "node").mkdir()
    config, env, node_url = restartable_node(tmp_path / "node")
    node = spawn(config, env)
    gateway_process, url = None, ""
    try:
        wait_for(node, lambda: bool(get(node_url + "/v2/health")[1]["ready"]), "ready")
        gateway_process, url = spawn_gateway(
            tmp_path / "gateway", [node_url], screener, f"stream_heartbeat_secs = {HEARTBEAT_SECS}\n"
        )
        wait_for(gateway_process, lambda: feeds_open(url), "following the node")
        reader = Reader(url + f"/v2/stream/trades?instrument_id={IID}")
        wait_for(gateway_process, lambda: len(reader.events("trade")) > 0, "relaying trades")
        stop(node)
        wait_for(
            gateway_process, lambda: not any(s["connected"] for s in status(url)["upstreams"][0]["streams"]), "lost"
        )
        document = status(url)
        assert all(s["last_error"].startswith("node-1: GET /v2/stream/") for s in document["upstreams"][0]["streams"])
        assert node_url not in str(document)
        assert ok(url + "/v2/screener/health")["process_state"] in ("RUNNING", "DEGRADED")
        envelope(get(url + f"/v2/bars?instrument_id={IID}"), 502, "UPSTREAM_UNAVAILABLE")
        trades = len(reader.events("trade"))
        time.sleep(2 * HEARTBEAT_SECS)
        assert reader.events("heartbeat") and reader.error is None  # the client's stream stays open
        node = spawn(config, env)
        wait_for(gateway_process, lambda: feeds_open(url, connects=2), "following the node again", 60)
        wait_for(gateway_process, lambda: len(reader.events("trade")) > trades, "relaying trades again")
        reader.stop()
    finally:
        if gateway_process is not None:
            out, err = stop(gateway_process)
            assert gateway_process.returncode == 0, err
        stop(node)


def test_a_node_out_of_reach_costs_only_its_own_feeds(base: str, screener: str, tmp_path: Path) -> None:
    """Over two nodes, one never reachable: the other's streams flow; its feeds retry; a v1
    stream needs an instrument (its cursor is one node's)."""
    dead = f"http://127.0.0.1:{free_port()}"
    process, url = spawn_gateway(tmp_path, [base, dead], screener, f"stream_heartbeat_secs = {HEARTBEAT_SECS}\n")
    try:
        wait_for(process, lambda: status(url)["upstreams"][0]["streams"][0]["connected"], "following the live node")
        assert [name for name, _ in sse(url + f"/v2/stream/trades?instrument_id={IID}", 3)] == ["trade"] * 3
        code, refusal = get(url + "/stream")
        assert code == 400 and refusal["version"] == "spine.v1"  # the v1 envelope, as the node's v1 refusals
        assert refusal["error"]["detail"].startswith("INVALID_PARAMETER: ") and "instrument_id" in str(refusal)
        assert [
            d["document"]["instrument_id"] for _, d in sse(url + f"/stream?instrument_id={IID}", 2) if "document" in d
        ] != []
        lost = status(url)["upstreams"][1]
        assert lost["name"] == "node-2" and not any(s["connected"] for s in lost["streams"])
        assert all(
            s["last_error"] == f"node-2: GET {s['path']}: connection refused or unreachable" for s in lost["streams"]
        ), lost
        assert dead not in str(status(url))
    finally:
        out, err = stop(process)
        assert process.returncode == 0, err
