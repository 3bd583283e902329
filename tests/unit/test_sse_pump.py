"""The SSE pump: the first event goes out at once; events arriving faster than the linger go
out together in one send; a departed client ends the pump without waiting for an event; on the
v1 stream, events a slow subscriber's queue dropped are announced by a resync."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from spine.fanout import FanOut
from spine.http.app import NodeApp


def ev(k: int) -> bytes:
    return b"event: bar\ndata: {\"k\":%d}\n\n" % k


class Transport:
    def __init__(self) -> None:
        self.sent: list[bytes] = []

    async def send_bytes(self, data: bytes) -> None:
        self.sent.append(data)


class Proto:
    def __init__(self) -> None:
        self.transport = Transport()
        self.gone = asyncio.Event()

    def response_stream(self, status: int, headers: list[tuple[str, str]]) -> Transport:
        return self.transport

    async def client_disconnect(self) -> None:
        await self.gone.wait()


def app(linger: float) -> tuple[NodeApp, FanOut]:
    hub = FanOut()
    node = SimpleNamespace(hub=hub, status=SimpleNamespace(run_id="r"), book={"A.SIM"})
    return NodeApp(node, heartbeat_secs=60, linger_secs=linger), hub


def test_a_burst_inside_the_linger_goes_out_in_one_send() -> None:
    async def scenario() -> list[bytes]:
        node_app, hub = app(0.05)
        proto = Proto()
        pump = asyncio.create_task(node_app._pump(proto, hub.subscribe(), b"", None))
        await asyncio.sleep(0)
        hub.publish("bar", "A.SIM", ev(0))
        await asyncio.sleep(0.01)
        for k in range(1, 51):  # each yields to the loop, as a live producer would
            hub.publish("bar", "A.SIM", ev(k))
            await asyncio.sleep(0)
        await asyncio.sleep(0.1)
        proto.gone.set()
        await asyncio.wait_for(pump, 5)
        return proto.transport.sent

    sent = asyncio.run(scenario())
    assert sent == [ev(0), b"".join(ev(k) for k in range(1, 51))]


def test_without_linger_each_wake_sends_what_is_pending() -> None:
    async def scenario() -> list[bytes]:
        node_app, hub = app(0.0)
        proto = Proto()
        pump = asyncio.create_task(node_app._pump(proto, hub.subscribe(), b"", None))
        await asyncio.sleep(0)
        for k in range(3):
            hub.publish("bar", "A.SIM", ev(k))
            await asyncio.sleep(0.01)
        proto.gone.set()
        await asyncio.wait_for(pump, 5)
        return proto.transport.sent

    assert asyncio.run(scenario()) == [ev(0), ev(1), ev(2)]


def test_events_dropped_from_a_slow_v1_subscriber_are_announced_by_resync() -> None:
    async def scenario() -> list[bytes]:
        node_app, _ = app(0.0)
        subscription, backlog = node_app.journal.open(None, None)
        for k in range(2_100):  # 52 more than the queue holds: the oldest are dropped
            node_app.journal.record("trade", "A.SIM", ev(k))
        proto = Proto()
        pump = asyncio.create_task(node_app._pump(proto, subscription, backlog, node_app.journal))
        await asyncio.sleep(0.05)
        proto.gone.set()
        await asyncio.wait_for(pump, 5)
        return proto.transport.sent

    first, *_ = asyncio.run(scenario())
    messages = first.split(b"\n\n")
    assert messages[0].startswith(b"event: resync\ndata: ") and b'"reason":"EVENTS_DROPPED"' in messages[0]
    ids = [int(m.split(b"\n")[0][4:]) for m in messages[1:] if m]
    assert ids == list(range(53, 2_101))
