"""The SSE stream in push mode: events published in one event-loop turn leave in one send,
later ones at once in their own; a departed client ends the stream at once; a quiet stream
sends heartbeats; a failing or blocking transport ends the stream without touching the
others; on the v1 stream, events a slow subscriber's queue dropped are announced by a resync."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace
from typing import Any

import pytest

from reference.wire_validator import validate
from spine.fanout import FanOut
from spine.http import streams
from spine.http.streams import pump
from spine.node.api import NodeApp


def ev(k: int) -> bytes:
    return b'event: bar\ndata: {"k":%d}\n\n' % k


class Transport:
    def __init__(self) -> None:
        self.sent: list[bytes] = []

    async def send_bytes(self, data: bytes) -> None:  # completes at once, as Granian's does
        self.sent.append(data)


class Failing(Transport):
    async def send_bytes(self, data: bytes) -> None:
        raise OSError("connection reset")


class Blocking(Transport):
    async def send_bytes(self, data: bytes) -> None:
        await asyncio.sleep(1)


class Proto:
    def __init__(self, transport: Transport | None = None) -> None:
        self.transport = transport or Transport()
        self.gone = asyncio.Event()

    def response_stream(self, status: int, headers: list[tuple[str, str]]) -> Transport:
        return self.transport

    async def client_disconnect(self) -> None:
        await self.gone.wait()


def app() -> tuple[NodeApp, FanOut]:
    hub = FanOut()
    node: Any = SimpleNamespace(
        hub=hub, run_id="r", holds={"A.SIM"}.__contains__, deployment_mode="public-readonly", execution=None
    )
    return NodeApp(node, heartbeat_secs=60), hub


def live(hub: FanOut, proto: Proto, heartbeat_secs: float = 60, **options: Any) -> asyncio.Task[None]:
    """The task pumping a new subscription to ``hub`` into ``proto``, with no backlog (start it
    inside a running loop); ``options``: pump's ``probe`` and ``egress``."""
    return asyncio.create_task(pump(proto, hub.subscribe(), None, None, heartbeat_secs, **options))


def test_one_turn_of_events_is_one_send_and_later_events_go_out_at_once() -> None:
    async def scenario() -> list[bytes]:
        _, hub = app()
        proto = Proto()
        stream = live(hub, proto)
        await asyncio.sleep(0)
        for k in range(3):  # three turns, one event each
            hub.publish("bar", "A.SIM", ev(k))
            await asyncio.sleep(0)
            await asyncio.sleep(0)
        for k in range(3, 53):  # fifty in one turn
            hub.publish("bar", "A.SIM", ev(k))
        await asyncio.sleep(0.01)
        proto.gone.set()
        await asyncio.wait_for(stream, 5)
        return proto.transport.sent

    assert asyncio.run(scenario()) == [ev(0), ev(1), ev(2), b"".join(ev(k) for k in range(3, 53))]


def test_a_departed_client_ends_the_stream_and_its_subscription_at_once() -> None:
    async def scenario() -> tuple[int, int]:
        _, hub = app()
        proto = Proto()
        stream = live(hub, proto)
        await asyncio.sleep(0)
        before = len(hub)
        proto.gone.set()
        await asyncio.wait_for(stream, 1)
        hub.publish("bar", "A.SIM", ev(0))
        await asyncio.sleep(0)
        return before, len(hub)

    assert asyncio.run(scenario()) == (1, 0)


def test_a_quiet_stream_sends_heartbeats() -> None:
    async def scenario() -> list[bytes]:
        _, hub = app()
        proto = Proto()
        stream = live(hub, proto, 0.02)
        await asyncio.sleep(0.07)
        proto.gone.set()
        await asyncio.wait_for(stream, 1)
        return proto.transport.sent

    sent = asyncio.run(scenario())
    assert 2 <= len(sent) <= 4
    for chunk in sent:
        name, data = chunk.decode().split("\n")[:2]
        assert name == "event: heartbeat" and json.loads(data[6:])["version"] == "spine.v2"
        validate(json.loads(data[6:]), "svc.stream_heartbeat")


@pytest.mark.parametrize(("version", "schema_id"), [("spine.v2", "svc.stream_heartbeat"), ("spine.v1", "v1.heartbeat")])
def test_a_heartbeat_is_a_tagged_schema_valid_document(version: str, schema_id: str) -> None:
    name, data = streams.heartbeat(version).decode().split("\n")[:2]
    document = json.loads(data.removeprefix("data: "))
    assert name == "event: heartbeat" and document["schema_id"] == schema_id
    validate(document)


def test_a_failing_or_blocking_transport_ends_its_stream_only() -> None:
    async def scenario(broken: Transport) -> tuple[list[bytes], int]:
        _, hub = app()
        good, bad = Proto(), Proto(broken)
        streams = [live(hub, p) for p in (good, bad)]
        await asyncio.sleep(0)
        hub.publish("bar", "A.SIM", ev(0))
        await asyncio.wait_for(streams[1], 1)  # ended without the client leaving
        hub.publish("bar", "A.SIM", ev(1))
        await asyncio.sleep(0)
        good.gone.set()
        await asyncio.wait_for(streams[0], 1)
        return good.transport.sent, len(hub)

    for broken in (Failing(), Blocking()):
        assert asyncio.run(scenario(broken)) == ([ev(0), ev(1)], 0)


def test_events_dropped_from_a_slow_v1_subscriber_are_announced_by_resync() -> None:
    async def scenario() -> list[bytes]:
        node_app, _ = app()
        subscription, backlog = node_app.journal.open(None, None)
        for k in range(2_100):  # 52 more than the queue holds: the oldest are dropped
            node_app.journal.record("trade", "A.SIM", ev(k))
        proto = Proto()
        stream = asyncio.create_task(pump(proto, subscription, backlog, node_app.journal, 60))
        await asyncio.sleep(0.05)
        proto.gone.set()
        await asyncio.wait_for(stream, 5)
        return proto.transport.sent

    first, *_ = asyncio.run(scenario())
    messages = first.split(b"\n\n")
    assert messages[0].startswith(b"event: resync\ndata: ") and b'"reason":"EVENTS_DROPPED"' in messages[0]
    ids = [int(m.split(b"\n")[0][4:]) for m in messages[1:] if m]
    base = ids[-1] - 2_100  # cursors count from the run's base
    assert ids == [base + k for k in range(53, 2_101)]


class Probe:
    """A connection whose unsent bytes the test sets (and counts the looks)."""

    def __init__(self) -> None:
        self.value = 0
        self.looks = 0

    def unsent(self) -> int:
        self.looks += 1
        return self.value


def test_a_client_that_stops_reading_is_held_and_loses_its_oldest_events(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(streams, "CHECK_BYTES", 1)  # look at the send queue after every send
    monkeypatch.setattr(streams, "RETRY_SECS", 0.01)
    monkeypatch.setattr(streams, "RETRY_MAX_SECS", 0.01)

    async def scenario() -> tuple[list[bytes], list[bytes], int]:
        node_app, hub = app()
        probe, slow, fast = Probe(), Proto(), Proto()
        subscription, backlog = node_app.journal.open(None, None)
        tasks = [
            asyncio.create_task(pump(slow, subscription, backlog, node_app.journal, 60, probe)),  # type: ignore[arg-type]
            live(node_app.journal.live, fast),
        ]
        await asyncio.sleep(0)
        node_app.journal.record("trade", "A.SIM", ev(0))
        await asyncio.sleep(0)
        probe.value = streams.BEHIND_BYTES  # the client stopped reading
        for k in range(1, 3_001):
            node_app.journal.record("trade", "A.SIM", ev(k))
            if k % 100 == 0:
                await asyncio.sleep(0)
        await asyncio.sleep(0.03)
        held = list(slow.transport.sent)
        probe.value = 0  # it reads again
        await asyncio.sleep(0.05)
        for proto in (slow, fast):
            proto.gone.set()
        await asyncio.gather(*tasks)
        return held, slow.transport.sent, sum(m.count(b"event: trade") for m in fast.transport.sent)

    held, sent, fast_events = asyncio.run(scenario())
    assert fast_events == 3_001  # the others never wait for it
    assert len(held) == 1  # event 0, then nothing while behind
    messages = b"".join(sent[1:]).split(b"\n\n")
    assert messages[0].startswith(b"event: resync\ndata: ") and b'"reason":"EVENTS_DROPPED"' in messages[0]
    ids = [int(m.split(b"\n")[0][4:]) for m in messages[1:] if m]
    base = ids[-1] - 3_001  # cursors count from the run's base + 1
    assert ids == [base + k for k in range(3_002 - 2_048, 3_002)]  # the newest 2,048


def test_a_held_stream_looks_again_less_and_less_often(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(streams, "CHECK_BYTES", 1)
    monkeypatch.setattr(streams, "RETRY_SECS", 0.01)
    monkeypatch.setattr(streams, "RETRY_MAX_SECS", 0.08)

    async def scenario() -> tuple[int, int]:
        _, hub = app()
        probe, proto = Probe(), Proto()
        stream = live(hub, proto, probe=probe)
        await asyncio.sleep(0)
        hub.publish("bar", "A.SIM", ev(0))
        await asyncio.sleep(0)
        probe.value = streams.BEHIND_BYTES
        hub.publish("bar", "A.SIM", ev(1))
        await asyncio.sleep(0.3)  # every 10 ms this would be 30 looks; backing off, about 6
        behind = probe.looks
        probe.value = 0
        await asyncio.sleep(0.2)  # the next look (at most 80 ms away) finds it caught up
        proto.gone.set()
        await asyncio.wait_for(stream, 1)
        return behind, len(proto.transport.sent)

    looks, sends = asyncio.run(scenario())
    assert 2 <= looks <= 10
    assert sends == 2  # event 0, then event 1 once caught up


def test_a_resumed_backlog_goes_out_only_as_fast_as_the_client_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """A v1 client resuming far back has up to the whole journal to replay: it is handed to
    the transport in pieces of about ``CHECK_BYTES``, each only while the client keeps up, so
    one that does not read costs the node a piece, not the journal (Granian queues every send
    without bound). Once it reads, it gets the rest in order, then the live events."""
    monkeypatch.setattr(streams, "CHECK_BYTES", 1_024)
    monkeypatch.setattr(streams, "RETRY_SECS", 0.01)
    monkeypatch.setattr(streams, "RETRY_MAX_SECS", 0.01)

    async def scenario() -> tuple[int, list[bytes]]:
        node_app, _ = app()
        for k in range(1_000):
            node_app.journal.record("trade", "A.SIM", ev(k))
        probe, proto = Probe(), Proto()
        probe.value = streams.BEHIND_BYTES  # a client that does not read
        subscription, backlog = node_app.journal.open(node_app.journal.base, None)
        stream = asyncio.create_task(pump(proto, subscription, backlog, node_app.journal, 60, probe))  # type: ignore[arg-type]
        await asyncio.sleep(0.05)
        handed = sum(map(len, proto.transport.sent))
        probe.value = 0  # it reads again
        await asyncio.sleep(0.05)
        node_app.journal.record("trade", "A.SIM", ev(1_000))
        await asyncio.sleep(0.02)
        proto.gone.set()
        await asyncio.wait_for(stream, 5)
        return handed, proto.transport.sent

    handed, sent = asyncio.run(scenario())
    assert 0 < handed < 2 * 1_024  # one piece (whole frames), not ~60 kB of backlog
    messages = [m for m in b"".join(sent).split(b"\n\n") if m]
    assert all(m.startswith(b"id: ") for m in messages)  # every frame whole, no resync
    ids = [int(m.split(b"\n")[0][4:]) for m in messages]
    assert ids == list(range(ids[0], ids[0] + 1_001))  # the backlog in order, then the live event


def test_events_a_connected_slow_subscriber_drops_are_counted_while_it_is_connected(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(streams, "CHECK_BYTES", 1)
    monkeypatch.setattr(streams, "RETRY_SECS", 0.01)
    monkeypatch.setattr(streams, "RETRY_MAX_SECS", 0.01)

    async def scenario() -> tuple[int, int, int]:
        _, hub = app()
        egress, probe, proto = streams.Egress(), Probe(), Proto()
        stream = live(hub, proto, probe=probe, egress=egress)
        await asyncio.sleep(0)
        hub.publish("bar", "A.SIM", ev(0))
        await asyncio.sleep(0)
        probe.value = streams.BEHIND_BYTES  # the client stopped reading: it is held
        for k in range(1, 3_001):
            hub.publish("bar", "A.SIM", ev(k))
        await asyncio.sleep(0)
        connected = egress.document()["events_dropped"]
        again = egress.document()["events_dropped"]  # read twice: counted once
        proto.gone.set()
        await asyncio.wait_for(stream, 5)
        return connected, again, egress.document()["events_dropped"]

    assert asyncio.run(scenario()) == (3_000 - 2_048,) * 3


@pytest.mark.parametrize("lossless", [False, True])
def test_drops_counted_by_a_health_read_still_reach_the_stream(monkeypatch: pytest.MonkeyPatch, lossless: bool) -> None:
    """A document read while a held subscriber drops counts the drops, and the stream still
    sees them when it sends again: a v1 stream sends its resync, a lossless one ends."""
    monkeypatch.setattr(streams, "CHECK_BYTES", 1)
    monkeypatch.setattr(streams, "RETRY_SECS", 0.01)
    monkeypatch.setattr(streams, "RETRY_MAX_SECS", 0.01)

    async def scenario() -> tuple[list[bytes], int, bool]:
        node_app, _ = app()
        egress, probe, proto = streams.Egress(), Probe(), Proto()
        subscription, backlog = node_app.journal.open(None, None)
        journal = None if lossless else node_app.journal
        stream = asyncio.create_task(
            pump(
                proto,
                subscription,
                backlog,
                journal,
                60,
                probe,  # type: ignore[arg-type]
                egress=egress,
                lossless=lossless,
            )
        )
        await asyncio.sleep(0)
        node_app.journal.record("trade", "A.SIM", ev(0))
        await asyncio.sleep(0)
        probe.value = streams.BEHIND_BYTES  # held
        for k in range(1, 3_001):
            node_app.journal.record("trade", "A.SIM", ev(k))
        await asyncio.sleep(0)
        dropped = egress.document()["events_dropped"]  # the health read counts them first
        probe.value = 0  # it reads again
        await asyncio.sleep(0.05)
        ended = stream.done()
        proto.gone.set()
        await asyncio.wait_for(stream, 5)
        return proto.transport.sent, dropped, ended

    sent, dropped, ended = asyncio.run(scenario())
    assert dropped == 3_000 - 2_048
    if lossless:
        assert ended and not any(b"event: trade" in chunk for chunk in sent[1:])  # ended, never sent past the hole
    else:
        assert b"".join(sent[1:]).startswith(b"event: resync\ndata: ")
