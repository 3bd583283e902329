"""The v1 event stream's journal: a run-scoped sequence for every event the node publishes,
the newest ``capacity`` events kept for resuming clients, and a hub of v1 frames for live ones.

Each published event (an SSE frame ``event: <kind>`` + one ``data`` line holding the v2
document) becomes one v1 frame, built once: ``id: <cursor>``, the same event name, and a
``v1.stream_event`` body carrying the cursor and the v2 document. A client resumes with
``?cursor=<n>`` (or ``Last-Event-ID``) and gets every kept event above ``n``, then the live
ones. When that cannot be honoured (the cursor fell out of the window, is ahead of this run,
or the client's queue dropped events), it gets ``event: resync`` instead, never silence.

A cursor is run-scoped: a run numbers its events from ``base`` up, and the node takes the run's
start time in nanoseconds as ``base``. A run emits far fewer events than nanoseconds pass, so
every cursor an earlier run handed out lies below the next run's ``base``, and a client resuming
across a restart gets ``resync`` ``CURSOR_EXPIRED`` rather than this run's events under numbers
it already saw.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import msgspec

from spine.fanout import FanOut, Subscription

__all__ = ["JOURNAL_EVENTS", "Journal"]

#: Events kept for resuming clients (a few minutes of the simulated venue's traffic).
JOURNAL_EVENTS = 16_384
_encode = msgspec.json.Encoder().encode


class Journal:
    """Numbers and keeps the node's events; install with ``hub.taps.append(journal.record)``."""

    def __init__(self, run_id: str | None, capacity: int = JOURNAL_EVENTS, base: int = 0) -> None:
        self.run_id = run_id
        self.base = base
        self.latest = base
        self._kept: deque[tuple[int, str, bytes]] = deque(maxlen=capacity)
        self.live = FanOut()
        self._run = _encode(run_id)

    def record(self, kind: str, instrument_id: str, payload: bytes) -> None:
        kind = kind.partition(":")[0]  # bar kinds carry their resolution and channel: the event is "bar"
        self.latest += 1
        document = payload[payload.index(b"\ndata: ") + 7: -2]
        cursor = str(self.latest).encode()
        frame = (b"id: " + cursor + b"\nevent: " + kind.encode() + b'\ndata: {"version":"spine.v1",'
                 b'"schema_id":"v1.stream_event","schema_version":1,"run_id":' + self._run + b',"cursor":"'
                 + cursor + b'","kind":"' + kind.encode() + b'","document":' + document + b"}\n\n")
        self._kept.append((self.latest, instrument_id, frame))
        self.live.publish(kind, instrument_id, frame)

    @property
    def oldest(self) -> int | None:
        return self._kept[0][0] if self._kept else None

    def open(self, cursor: int | None, instrument_id: str | None) -> tuple[Subscription, bytes]:
        """A live subscription and what precedes it: the kept events above ``cursor`` (or a
        resync when they cannot all be given). Subscribing and reading the backlog happen with
        no await between them, so nothing falls between the two or comes twice."""
        subscription = self.live.subscribe(instruments=None if instrument_id is None else [instrument_id])
        if cursor is None:
            return subscription, b""
        oldest = self.oldest
        if cursor > self.latest:
            return subscription, self.resync(cursor, "CURSOR_AHEAD")
        if cursor < self.base or (oldest is not None and cursor < oldest - 1):
            return subscription, self.resync(cursor, "CURSOR_EXPIRED")
        backlog = [frame for sequence, iid, frame in self._kept
                   if sequence > cursor and (instrument_id is None or iid == instrument_id)]
        return subscription, b"".join(backlog)

    def resync(self, requested: int | None, reason: str) -> bytes:
        """``event: resync``: the client must re-read state; the stream goes on from ``latest``."""
        body: dict[str, Any] = {
            "version": "spine.v1", "schema_id": "v1.resync", "schema_version": 1, "run_id": self.run_id,
            "requested": None if requested is None else str(requested),
            "oldest": None if self.oldest is None else str(self.oldest), "latest": str(self.latest),
            "reason": reason,
        }
        return b"event: resync\ndata: " + _encode(body) + b"\n\n"
