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
from itertools import islice
from typing import Any

import msgspec

from spine.fanout import FanOut, Subscription

__all__ = ["JOURNAL_EVENTS", "Backlog", "Journal"]

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
        document = payload[payload.index(b"\ndata: ") + 7 : -2]
        cursor = str(self.latest).encode()
        frame = (
            b"id: " + cursor + b"\nevent: " + kind.encode() + b'\ndata: {"version":"spine.v1",'
            b'"schema_id":"v1.stream_event","schema_version":1,"run_id":'
            + self._run
            + b',"cursor":"'
            + cursor
            + b'","kind":"'
            + kind.encode()
            + b'","document":'
            + document
            + b"}\n\n"
        )
        self._kept.append((self.latest, instrument_id, frame))
        self.live.publish(kind, instrument_id, frame)

    @property
    def oldest(self) -> int | None:
        return self._kept[0][0] if self._kept else None

    def open(self, cursor: int | None, instrument_id: str | None) -> tuple[Subscription, Backlog]:
        """A live subscription and what precedes it: the kept events above ``cursor`` (or a
        resync when they cannot all be given). Subscribing and fixing the backlog's end happen
        with no await between them, so nothing falls between the two or comes twice."""
        subscription = self.live.subscribe(instruments=None if instrument_id is None else [instrument_id])
        if cursor is None:
            return subscription, Backlog(self, self.latest, self.latest, instrument_id)
        oldest = self.oldest
        if cursor > self.latest:
            return subscription, Backlog(self, self.latest, self.latest, None, self.resync(cursor, "CURSOR_AHEAD"))
        if cursor < self.base or (oldest is not None and cursor < oldest - 1):
            return subscription, Backlog(self, self.latest, self.latest, None, self.resync(cursor, "CURSOR_EXPIRED"))
        return subscription, Backlog(self, cursor, self.latest, instrument_id)

    def kept_above(self, after: int, upto: int, instrument_id: str | None, size: int) -> tuple[list[bytes], int] | None:
        """Kept frames above ``after`` up to ``upto`` (of ``instrument_id`` when given), about
        ``size`` bytes of them, and the sequence read up to; None when the frame after
        ``after`` is no longer kept."""
        oldest = self.oldest
        if oldest is None or after + 1 < oldest:
            return None
        frames, total, last = [], 0, after
        for sequence, iid, frame in islice(self._kept, after + 1 - oldest, None):
            if sequence > upto or total >= size:
                break
            last = sequence
            if instrument_id is None or iid == instrument_id:
                frames.append(frame)
                total += len(frame)
        return frames, last

    def resync(self, requested: int | None, reason: str) -> bytes:
        """``event: resync``: the client must re-read state; the stream goes on from ``latest``."""
        body: dict[str, Any] = {
            "version": "spine.v1",
            "schema_id": "v1.resync",
            "schema_version": 1,
            "run_id": self.run_id,
            "requested": None if requested is None else str(requested),
            "oldest": None if self.oldest is None else str(self.oldest),
            "latest": str(self.latest),
            "reason": reason,
        }
        return b"event: resync\ndata: " + _encode(body) + b"\n\n"


class Backlog:
    """What a resumed stream sends before its live events: the kept frames above its cursor up
    to the newest when it subscribed, read from the journal a piece at a time as the client
    takes them (it holds no frames itself, so a client that does not read costs the node
    nothing but its place), or a resync. Frames that leave the journal before the client
    takes them end it with a resync ``CURSOR_EXPIRED``; the stream then goes on live."""

    __slots__ = ("after", "first", "instrument_id", "journal", "upto")

    def __init__(self, journal: Journal, after: int, upto: int, instrument_id: str | None, first: bytes = b"") -> None:
        self.journal, self.after, self.upto, self.instrument_id, self.first = journal, after, upto, instrument_id, first

    def take(self, size: int) -> bytes:
        """The next whole frames, about ``size`` bytes of them; ``b""`` when all are taken."""
        if self.first:
            first, self.first = self.first, b""
            return first
        while self.after < self.upto:
            kept = self.journal.kept_above(self.after, self.upto, self.instrument_id, size)
            if kept is None:
                requested, self.after = self.after, self.upto
                return self.journal.resync(requested, "CURSOR_EXPIRED")
            frames, self.after = kept
            if frames:
                return b"".join(frames)
        return b""
