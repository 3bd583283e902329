"""Fan-out: Spine's hub against one ``asyncio.Queue`` per subscriber in pure Python (the
baseline a user writes by hand), side by side, with the same semantics: bounded queues of
2,048 that drop their oldest, and a keep-predicate applied at enqueue.

- publish: 10,000 encoded trade events through a hub holding 100 idle subscribers (their
  queues fill, then every publish drops an oldest event), plus one subscriber that keeps a
  single instrument;
- round trip: publish one event and await it in a waiting consumer, 1,000 times in one event
  loop (publish-to-dequeue latency, wake-up included);
- fan-out rounds: 50 events, each handed to 1,000 subscribers before the next (push mode,
  one flush per loop turn, against one task per subscriber awaiting its queue).

Both rivals deliver the same bytes (checked before timing). Smoke mode: --benchmark-disable.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from spine.fanout import QUEUE_EVENTS, FanOut, Subscription

EVENTS = 10_000
IDLE = 100
INSTRUMENTS = [f"SYM{k}USDT.SIM" for k in range(50)]
TRADES = [
    (INSTRUMENTS[k % 50], f'event: trade\ndata: {{"seq":{k},"price":"27001.50"}}\n\n'.encode()) for k in range(EVENTS)
]


class QueueFanOut:
    """The pure-Python baseline: a list of (predicate, asyncio.Queue) pairs."""

    def __init__(self) -> None:
        self.subscribers: list[tuple[set[str] | None, asyncio.Queue[bytes]]] = []

    def subscribe(self, instruments: list[str] | None = None) -> asyncio.Queue[bytes]:
        queue: asyncio.Queue[bytes] = asyncio.Queue(QUEUE_EVENTS)
        self.subscribers.append((None if instruments is None else set(instruments), queue))
        return queue

    def publish(self, kind: str, instrument_id: str, payload: bytes) -> None:
        for keep, queue in self.subscribers:
            if keep is not None and instrument_id not in keep:
                continue
            if queue.full():
                queue.get_nowait()  # oldest first
            queue.put_nowait(payload)


def _spine() -> tuple[Any, Any]:
    fan = FanOut()
    subs = [fan.subscribe() for _ in range(IDLE)]
    one = fan.subscribe(instruments=[INSTRUMENTS[7]])
    return fan, (subs, one)


def _baseline() -> tuple[Any, Any]:
    fan = QueueFanOut()
    subs = [fan.subscribe() for _ in range(IDLE)]
    one = fan.subscribe([INSTRUMENTS[7]])
    return fan, (subs, one)


def _publish_all(fan: Any) -> None:
    for instrument, payload in TRADES:
        fan.publish("trade", instrument, payload)


def test_rivals_deliver_the_same_bytes() -> None:
    async def run() -> None:
        spine_fan, (spine_subs, spine_one) = _spine()
        base_fan, (base_subs, base_one) = _baseline()
        _publish_all(spine_fan)
        _publish_all(base_fan)
        expected = b"".join(p for _, p in TRADES[-QUEUE_EVENTS:])
        assert await spine_subs[0].next() == expected
        drained = []
        while not base_subs[0].empty():
            drained.append(base_subs[0].get_nowait())
        assert b"".join(drained) == expected
        mine = [p for i, p in TRADES if i == INSTRUMENTS[7]]
        assert await spine_one.next() == b"".join(mine)
        assert [base_one.get_nowait() for _ in mine] == mine

    asyncio.run(run())


@pytest.mark.benchmark(group="publish-100-idle")
@pytest.mark.parametrize("rival", ["spine", "asyncio.Queue"])
def test_publish(benchmark: BenchmarkFixture, rival: str) -> None:
    loop = asyncio.new_event_loop()  # asyncio.Queue binds to a loop; the hub needs none
    asyncio.set_event_loop(loop)
    try:
        fan, _ = (_spine if rival == "spine" else _baseline)()
        _publish_all(fan)  # fill every queue: each timed publish also drops an oldest event
        benchmark.pedantic(_publish_all, args=(fan,), rounds=10, iterations=1)
    finally:
        asyncio.set_event_loop(None)
        loop.close()


async def _round_trips(fan: FanOut | QueueFanOut, n: int) -> None:
    """One event at a time: a waiting subscriber, a publish, the event received."""
    subscriber = fan.subscribe()
    receive = subscriber.next if isinstance(subscriber, Subscription) else subscriber.get
    for instrument, payload in TRADES[:n]:
        waiter = asyncio.ensure_future(receive())
        await asyncio.sleep(0)
        fan.publish("trade", instrument, payload)
        assert await waiter == payload


@pytest.mark.benchmark(group="round-trip-1000")
@pytest.mark.parametrize("rival", ["spine", "asyncio.Queue"])
def test_round_trip(benchmark: BenchmarkFixture, rival: str) -> None:
    fan = FanOut if rival == "spine" else QueueFanOut
    benchmark.pedantic(lambda: asyncio.run(_round_trips(fan(), 1_000)), rounds=10, iterations=1)


SUBSCRIBERS = 1_000
ROUNDS = 50


async def _fan_rounds_spine(n: int) -> int:
    """Push mode, as the node's streams use it: each event reaches every subscriber's sink
    (here a list's append, standing in for the transport's send) within one loop turn."""
    fan = FanOut()
    sent: list[bytes] = []
    for sub in [fan.subscribe() for _ in range(SUBSCRIBERS)]:
        sub.push(sent.append)
    for instrument, payload in TRADES[:n]:
        fan.publish("trade", instrument, payload)
        await asyncio.sleep(0)  # the flush runs
    return len(sent)


async def _fan_rounds_queue(n: int) -> int:
    """One task per subscriber awaiting its queue and 'sending' each event (the by-hand way)."""
    fan = QueueFanOut()
    sent: list[bytes] = []
    done = asyncio.Event()

    async def consume(queue: asyncio.Queue[bytes]) -> None:
        while True:
            sent.append(await queue.get())
            if len(sent) % SUBSCRIBERS == 0:
                done.set()

    tasks = [asyncio.ensure_future(consume(fan.subscribe())) for _ in range(SUBSCRIBERS)]
    await asyncio.sleep(0)
    for instrument, payload in TRADES[:n]:
        done.clear()
        fan.publish("trade", instrument, payload)
        await done.wait()
    for task in tasks:
        task.cancel()
    return len(sent)


def test_fan_rounds_deliver_every_event_to_every_subscriber() -> None:
    assert asyncio.run(_fan_rounds_spine(5)) == asyncio.run(_fan_rounds_queue(5)) == 5 * SUBSCRIBERS


@pytest.mark.benchmark(group="fan-out-1000-subscribers")
@pytest.mark.parametrize("rival", ["spine", "asyncio.Queue"])
def test_fan_out_rounds(benchmark: BenchmarkFixture, rival: str) -> None:
    """``ROUNDS`` events, each delivered to 1,000 subscribers before the next is published."""
    body = _fan_rounds_spine if rival == "spine" else _fan_rounds_queue
    benchmark.pedantic(lambda: asyncio.run(body(ROUNDS)), rounds=5, iterations=1)
