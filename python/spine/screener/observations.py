"""The screener's pattern observations (``svc.pattern_observation``), kept for
``GET /v2/screener/observations``: a bounded store of the documents ``ObservationWriter.observe``
returned, oldest first, each decoded once when added and never recomputed on read.

The store keeps the newest ``capacity`` observations over every instrument and resolution
(100,000 by default); adding past it drops the oldest. Each record carries its ``sequence``:
1 for the first observation ever added, one more for each after, so a cursor stays meaningful
while older records are dropped.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from itertools import islice
from typing import Any, NamedTuple

import msgspec

from spine._core import ObservationWriter, TurnRun
from spine.screener.rows import Registering, Rows

__all__ = ["DEFAULT_CAPACITY", "Observations", "Observer", "Stored"]

#: Observations kept by default, over every instrument and resolution.
DEFAULT_CAPACITY = 100_000

_decode = msgspec.json.Decoder(dict[str, Any]).decode


class Stored(NamedTuple):
    """One kept observation: its place in arrival order, its ``ts_event`` as an int, and its
    document."""

    sequence: int
    ts_event: int
    document: dict[str, Any]


class Observations:
    """See the module docs."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise ValueError(f"capacity must be a positive int, got {capacity!r}")
        self._kept: deque[Stored] = deque(maxlen=capacity)
        self._sequence = 0

    @property
    def capacity(self) -> int:
        """Observations kept at most."""
        return self._kept.maxlen or 0

    @property
    def sequence(self) -> int:
        """The newest observation's sequence (0 before the first)."""
        return self._sequence

    def __len__(self) -> int:
        return len(self._kept)

    def add(self, documents: Iterable[bytes]) -> int:
        """Keep ``documents`` (``ObservationWriter.observe``'s list) in order, dropping the
        oldest past the capacity. Returns how many were added."""
        added = 0
        for raw in documents:
            document = _decode(raw)
            self._sequence += 1
            self._kept.append(Stored(self._sequence, int(document["ts_event"]), document))
            added += 1
        return added

    def page(
        self,
        *,
        instrument_id: str | None = None,
        resolution: str | None = None,
        start: int | None = None,
        end: int | None = None,
        after: int | None = None,
    ) -> list[Stored]:
        """The kept observations, oldest first, of ``instrument_id`` and ``resolution`` (either
        ``None``: any), whose ``ts_event`` lies in ``[start, end]`` (both inclusive, as
        ``/v2/bars`` bounds ``ts_event``; ``None``: unbounded) and whose sequence is above
        ``after``.

        Raises ``ValueError`` for an ``end`` before ``start`` (the route answers 400
        ``INVALID_PARAMETER`` before asking)."""
        if start is not None and end is not None and end < start:
            raise ValueError(f"end {end} precedes start {start}")
        low, high = start if start is not None else 0, end if end is not None else 2**64
        first = 0
        if after is not None and self._kept:
            # Sequences are consecutive: skip straight to the first one above `after`.
            first = min(max(after - self._kept[0].sequence + 1, 0), len(self._kept))
        return [
            stored
            for stored in islice(self._kept, first, None)
            if low <= stored.ts_event <= high
            and (instrument_id is None or stored.document["instrument_id"] == instrument_id)
            and (resolution is None or stored.document["resolution"] == resolution)
        ]


class Observer:
    """Detects the patterns of every change to ``rows`` as it happens (``ObservationWriter``)
    and keeps them in ``store``. A row's first read (a warm, a restore) only sets where the
    next comparison starts: history makes no observation. A catch-up folds several bars in one
    change: its patterns are those between the bar last read and the newest."""

    def __init__(self, rows: Rows, store: Observations) -> None:
        self.rows, self.store = rows, store
        self._writer = Registering(rows, ObservationWriter())
        rows.listeners.append(self.changed)
        rows.observer = self

    def writer(self) -> ObservationWriter:
        """The observation writer, every instrument of the rows registered."""
        return self._writer()

    def took(self, run: TurnRun) -> None:
        """Keep a live turn's run's documents (written in Rust)."""
        self.store.add(run.observations)

    def changed(self, pairs: bytes) -> None:
        self.store.add(self.writer().observe(self.rows.universe, pairs))
