"""The fan-out hub: bounded queues that drop their oldest, predicates applied at enqueue,
a producer that never waits, and asyncio consumers woken by publishes."""

from __future__ import annotations

import asyncio

import pytest

from spine._core import Hub
from spine.errors import HubError
from spine.fanout import QUEUE_EVENTS, FanOut


def frames(n: int, prefix: str = "e") -> list[bytes]:
    return [f"{prefix}{k};".encode() for k in range(n)]


def test_a_slow_subscriber_loses_its_oldest_events_and_counts_them() -> None:
    fan = FanOut()
    slow = fan.subscribe()
    events = frames(QUEUE_EVENTS + 500)
    for payload in events:
        fan.publish("trade", "BTCUSDT.SIM", payload)  # never blocks, nobody reads
    assert slow.stats() == {"pending": QUEUE_EVENTS, "dropped": 500, "enqueued": QUEUE_EVENTS + 500}
    assert asyncio.run(slow.next()) == b"".join(events[500:])


def test_a_slow_subscriber_does_not_cost_a_fast_one_anything() -> None:
    fan = FanOut()
    slow, fast = fan.subscribe(capacity=4), fan.subscribe(capacity=4)
    got = []
    for payload in frames(100):
        fan.publish("bar", "A.SIM", payload)
        got.append(fast._fanout._hub.drain(fast.id))
    assert b"".join(got) == b"".join(frames(100))
    assert fast.stats()["dropped"] == 0
    assert slow.stats()["dropped"] == 96


def test_the_predicate_isolates_a_single_instrument_subscriber() -> None:
    fan = FanOut()
    mine = fan.subscribe(instruments=["ETHUSDT.SIM"], kinds=["bar"])
    everything = fan.subscribe()
    for _ in range(10 * QUEUE_EVENTS):
        fan.publish("trade", "ETHUSDT.SIM", b"t")
        fan.publish("bar", "BTCUSDT.SIM", b"x")
    fan.publish("bar", "ETHUSDT.SIM", b"mine")
    assert mine.stats() == {"pending": 1, "dropped": 0, "enqueued": 1}
    assert asyncio.run(mine.next()) == b"mine"
    assert everything.stats()["dropped"] == 20 * QUEUE_EVENTS + 1 - QUEUE_EVENTS


def test_each_event_reaches_a_thousand_subscribers_once() -> None:
    fan = FanOut()
    subs = [fan.subscribe() for _ in range(1000)]
    for payload in frames(3):
        fan.publish("quote", "A.SIM", payload)
    assert {asyncio.run(s.next()) for s in subs} == {b"e0;e1;e2;"}


def test_a_waiting_consumer_wakes_on_publish_and_times_out_to_a_heartbeat() -> None:
    async def scenario() -> tuple[bytes, bytes]:
        fan = FanOut()
        with fan.subscribe(kinds=["bar"]) as sub:
            waiter = asyncio.create_task(sub.next(timeout=5))
            await asyncio.sleep(0)
            fan.publish("bar", "A.SIM", b"event: bar\ndata: {}\n\n")
            woken = await asyncio.wait_for(waiter, 5)
            quiet = await sub.next(timeout=0.01)
        assert len(fan) == 0
        return woken, quiet

    assert asyncio.run(scenario()) == (b"event: bar\ndata: {}\n\n", b"")


def test_interrupt_and_close_end_a_waiting_consumer_at_once() -> None:
    async def scenario() -> tuple[bytes, bytes, bytes]:
        fan = FanOut()
        sub, other = fan.subscribe(), fan.subscribe()
        waiter = asyncio.create_task(sub.next(timeout=60))
        closing = asyncio.create_task(other.next(timeout=60))
        await asyncio.sleep(0)
        sub.interrupt()
        other.close()
        woken, closed = await asyncio.wait_for(asyncio.gather(waiter, closing), 5)
        fan.publish("bar", "A.SIM", b"late")
        return woken, closed, await sub.next(timeout=60)  # interrupted for good

    assert asyncio.run(scenario()) == (b"", b"", b"")


def test_refusals_name_what_was_wrong() -> None:
    hub = Hub()
    with pytest.raises(HubError, match="INVALID_QUEUE_CAPACITY"):
        hub.subscribe(capacity=0)
    sid = hub.subscribe()
    hub.unsubscribe(sid)
    for call in (lambda: hub.drain(sid), lambda: hub.stats(sid), lambda: hub.unsubscribe(sid)):
        with pytest.raises(HubError, match="UNKNOWN_SUBSCRIBER"):
            call()
    everything = hub.subscribe()
    for k in range(100):  # kinds nobody named claim no bit: publishing never runs out
        assert hub.publish(f"kind{k}", "A.SIM", b"") == [everything] * (k == 0)
    with pytest.raises(HubError, match="TOO_MANY_KINDS"):
        hub.subscribe(kinds=[f"kind{k}" for k in range(64)])
    assert len(hub) == 1
    named = hub.subscribe(kinds=[f"kind{k}" for k in range(63)])  # the refusal registered nothing
    hub.publish("kind0", "A.SIM", b"x")
    assert hub.stats(named)[0] == 1
    with pytest.raises(HubError, match="TOO_MANY_KINDS"):
        hub.subscribe(kinds=["one_more"])
    for bad in (-1, 2**64, True):
        with pytest.raises(HubError, match="INVALID_INTEGER"):
            hub.subscribe(capacity=bad)
        with pytest.raises(HubError, match="INVALID_INTEGER"):
            hub.drain(named, bad)


def test_a_failing_tap_costs_subscribers_nothing() -> None:
    fan = FanOut()
    sub = fan.subscribe()

    def broken(kind: str, instrument_id: str, payload: bytes) -> None:
        raise ValueError("tap bug")

    fan.taps.append(broken)
    fan.publish("bar", "A.SIM", b"e0;")
    assert asyncio.run(sub.next()) == b"e0;"


def test_push_hands_each_sink_what_is_pending_once_per_turn_and_detaches_a_failing_one() -> None:
    async def scenario() -> tuple[list[bytes], list[str]]:
        fan = FanOut()
        got: list[bytes] = []
        calls: list[str] = []

        def broken(chunk: bytes) -> None:
            calls.append("broken")
            raise RuntimeError("sink failed")

        def not_sure() -> bool:
            calls.append("ready")
            raise RuntimeError("ready failed")

        early, failing, unsure = fan.subscribe(kinds=["bar"]), fan.subscribe(), fan.subscribe()
        fan.publish("bar", "A.SIM", b"e0;")  # queued before the sink is attached
        early.push(got.append)
        failing.push(broken)
        unsure.push(got.append, not_sure)
        fan.publish("bar", "A.SIM", b"e1;")
        await asyncio.sleep(0)
        fan.publish("quote", "A.SIM", b"q;")  # not kept by the bar subscriber
        fan.publish("bar", "A.SIM", b"e2;")
        fan.publish("bar", "A.SIM", b"e3;")
        await asyncio.sleep(0)
        return got, calls

    got, calls = asyncio.run(scenario())
    assert got == [b"e0;e1;", b"e2;e3;"]
    assert sorted(calls) == ["broken", "ready"]  # each detached after its first failure
