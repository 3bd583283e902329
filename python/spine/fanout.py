"""Fan-out to asyncio consumers over the Rust hub (``spine._core.Hub``).

Each event is encoded once by its producer and published as bytes; the hub shares those bytes
among the queues that keep it (one bounded queue of 2,048 per subscriber, oldest dropped
first, the keep-predicate applied at enqueue). A consumer either awaits ``next()``, which
returns everything it has pending as one byte string, ready for one write, or attaches a
sink with ``push()``: once per event-loop turn in which events reached it, the sink is called
with everything pending (events published in one turn go out in one write, with no delay
added). The producer never blocks or awaits: ``publish`` only resolves the futures of
consumers waiting on an empty queue and schedules one flush for the pushed ones.

Producers and consumers share one event loop (the node, its actor and the HTTP app run in
one), so no wake-up can fall between a consumer's empty drain and its wait.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from types import TracebackType

from spine._core import Frames, Hub

__all__ = ["QUEUE_EVENTS", "FanOut", "Subscription"]

log = logging.getLogger("spine.fanout")

#: The per-subscriber queue bound of the spec.
QUEUE_EVENTS = 2_048


class FanOut:
    """The hub plus, per subscriber waiting on an empty queue, one future to wake it."""

    def __init__(self) -> None:
        self._hub = Hub()
        #: Subscribers -> the future their ``next()`` awaits (None while not waiting). A bare
        #: future, not an asyncio.Event: waking 1,000 subscribers per event must stay cheap.
        self._waiting: dict[int, asyncio.Future[None] | None] = {}
        #: Called with every published event, before the queues (the v1 journal numbers them).
        self.taps: list[Callable[[str, str, bytes], None]] = []
        #: Push-mode subscribers -> (sink, ready); those with events since the last flush.
        self._sinks: dict[int, tuple[Callable[[bytes], None], Callable[[], bool] | None]] = {}
        self._dirty: set[int] = set()
        self._loop: asyncio.AbstractEventLoop | None = None

    def __len__(self) -> int:
        return len(self._hub)

    def subscribe(
        self,
        *,
        instruments: Sequence[str] | None = None,
        kinds: Sequence[str] | None = None,
        capacity: int = QUEUE_EVENTS,
    ) -> Subscription:
        """A subscription keeping ``instruments`` and ``kinds`` (``None``: all)."""
        sid = self._hub.subscribe(
            instruments=None if instruments is None else list(instruments),
            kinds=None if kinds is None else list(kinds),
            capacity=capacity,
        )
        self._waiting[sid] = None
        return Subscription(self, sid)

    def publish(self, kind: str, instrument_id: str, payload: bytes) -> None:
        """Offer one encoded event; never blocks."""
        for tap in self.taps:
            try:
                tap(kind, instrument_id, payload)
            except Exception:  # noqa: BLE001 - a tap's failure must not cost subscribers the event
                log.exception("fan-out tap %r failed on a %s event", tap, kind)
        self._deliver(self._hub.publish(kind, instrument_id, payload))

    def publish_frames(self, frames: Frames) -> None:
        """Offer a screener turn's events in order, as :meth:`publish` one after the other, in
        one hub call (the taps, if any, see each event first, one at a time as ever)."""
        if self.taps:
            for kind, instrument_id, payload in frames.events():
                self.publish(kind, instrument_id, payload)
            return
        self._deliver(self._hub.publish_frames(frames))

    def _deliver(self, kept: Sequence[int]) -> None:
        """Wake the pulling subscribers ``kept`` an event and mark the pushed ones for the flush."""
        waiting = self._waiting  # inlined _wake: this loop runs once per subscriber per event
        for sid in kept:
            waiter = waiting.get(sid)
            if waiter is not None and not waiter.done():
                waiter.set_result(None)
        if self._sinks and kept:
            self._mark(kept)

    def _push(self, sid: int, sink: Callable[[bytes], None], ready: Callable[[], bool] | None) -> None:
        self._loop = asyncio.get_running_loop()
        self._sinks[sid] = (sink, ready)
        self._mark((sid,))  # whatever the queue already holds goes out at the next flush

    def _mark(self, sids: Sequence[int]) -> None:
        if not self._dirty and self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon(self._flush)
        self._dirty.update(sids)

    def _flush(self) -> None:
        """Hand each pushed subscriber everything it has pending, in one call."""
        dirty, self._dirty = self._dirty, set()
        sinks, drain = self._sinks, self._hub.drain
        for sid in dirty:
            entry = sinks.get(sid)
            if entry is None:
                continue
            sink, ready = entry
            try:
                if ready is not None and not ready():
                    continue  # held: the events wait in the bounded queue until resume()
                if pending := drain(sid):
                    sink(pending)
            except Exception:  # noqa: BLE001 - one failing sink must not cost the others
                log.exception("fan-out sink of subscriber %d failed; it is detached", sid)
                sinks.pop(sid, None)

    def _wake(self, sid: int) -> None:
        waiter = self._waiting.get(sid)
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _close(self, sid: int) -> None:
        self._sinks.pop(sid, None)
        if sid in self._waiting:
            self._wake(sid)
            del self._waiting[sid]
            self._hub.unsubscribe(sid)


class Subscription:
    """One consumer's end: ``await next()`` for pending bytes; close when done."""

    def __init__(self, fanout: FanOut, sid: int) -> None:
        self._fanout = fanout
        self.id = sid
        self._interrupted = False

    async def next(self, timeout: float | None = None) -> bytes:
        """Everything pending, oldest first, as one byte string; ``b""`` when ``timeout``
        seconds pass with nothing (the caller's cue for a heartbeat) or on :meth:`interrupt`."""
        fanout = self._fanout
        if self._interrupted:
            return b""
        pending = fanout._hub.drain(self.id)
        if pending:
            return pending
        loop = asyncio.get_running_loop()
        waiter = fanout._waiting[self.id] = loop.create_future()
        timer = None if timeout is None else loop.call_later(timeout, _release, waiter)
        try:
            await waiter
        finally:
            if timer is not None:
                timer.cancel()
            if self.id in fanout._waiting:
                fanout._waiting[self.id] = None
        if self._interrupted or self.id not in fanout._waiting:
            return b""
        return fanout._hub.drain(self.id)

    def push(self, sink: Callable[[bytes], None], ready: Callable[[], bool] | None = None) -> None:
        """Push mode (call inside the event loop): from now on ``sink`` is called with
        everything pending, once per loop turn in which events arrived, starting with what
        the queue already holds. ``sink`` must not block; ``next()`` is not used any more.

        ``ready`` (optional) is asked first: False holds the events in the queue (which
        drops its oldest once full) until :meth:`resume` is called."""
        self._fanout._push(self.id, sink, ready)

    def resume(self) -> None:
        """Offer a held push subscriber its pending events again at the next flush."""
        if self.id in self._fanout._sinks:
            self._fanout._mark((self.id,))

    def drain(self) -> bytes:
        """Everything pending now, without waiting (``b""`` once interrupted)."""
        return b"" if self._interrupted else self._fanout._hub.drain(self.id)

    def interrupt(self) -> None:
        """End a pending (and every later) ``next()`` at once with ``b""``: the consumer has
        gone, whatever the queue holds."""
        self._interrupted = True
        self._fanout._wake(self.id)

    def stats(self) -> dict[str, int]:
        """``pending``, ``dropped`` (oldest-first evictions) and ``enqueued`` counts."""
        pending, dropped, enqueued = self._fanout._hub.stats(self.id)
        return {"pending": pending, "dropped": dropped, "enqueued": enqueued}

    def close(self) -> None:
        self._fanout._close(self.id)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def _release(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)
