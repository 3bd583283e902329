"""The screener's stream (``GET /v2/stream/screener``): every change to the rows, encoded once
and fanned out through the hub, and on connect the current rows the subscriber asked for.

Events (each with ``id:`` the rows' version, as ``svc.screener_snapshot.sequence`` counts):

- ``row``: a whole ``svc.feature_row``, which replaces the client's row: on connect, one per
  current row kept by the filters, all at the version of the connect; later, a changed row
  that has no bar yet (a delta carries the close time of the bar that made it).
- ``delta``: a ``svc.feature_row_delta`` (UPSERT and RETIRE only) against the row as last
  sent. A row's first delta upserts every key, so a client creates a row it lacks from it
  (an instrument added after it connected).
- ``heartbeat``: ``svc.stream_heartbeat`` after a quiet period.

A client starting from ``GET /v2/screener/snapshot`` applies the events whose id is above the
snapshot's ``sequence``. Filters (``instrument_id``, ``resolution``) apply at enqueue: a
resolution is the hub's event kind. A subscriber more than 2,048 events behind loses the
oldest, and its stream then ends: it reconnects and starts from fresh rows."""

from __future__ import annotations

import numpy as np

from spine._core import DeltaWriter, TurnRun
from spine.fanout import FanOut
from spine.http.streams import Egress
from spine.screener.rows import RESOLUTIONS, Registering, Rows
from spine.wire.projection import frame

__all__ = ["RowStream", "Snapshot", "Subscribers"]


class Subscribers:
    """The stream's subscribers: connected now, accepted and refused since start."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.open = self.accepted = self.refused = 0


class RowStream:
    """See the module docs. Listens to ``rows``: every change is published as it happens (a
    live turn's events come framed from its Rust call)."""

    def __init__(self, rows: Rows, max_subscribers: int = 1_024) -> None:
        self.rows = rows
        self.fanout = FanOut()
        self.egress = Egress()
        self.subscribers = Subscribers(max_subscribers)
        self._writer = Registering(rows, DeltaWriter())
        rows.listeners.append(self.changed)
        rows.stream = self

    def egress_document(self) -> dict[str, int]:
        """``svc.screener_health.egress``."""
        subscribers = self.subscribers
        return {
            "subscribers": subscribers.open,
            "accepted": subscribers.accepted,
            "refused": subscribers.refused,
            **self.egress.document(),
        }

    def writer(self) -> DeltaWriter:
        """The delta writer, every instrument of the rows registered."""
        return self._writer()

    def took(self, run: TurnRun) -> None:
        """Publish a live turn's run: its events, framed in Rust."""
        self.fanout.publish_frames(run.frames)

    def changed(self, pairs: bytes) -> None:
        """Publish the rows ``pairs`` changed (the writer takes every change, so that a delta is
        always against what the stream last said of its row)."""
        rows = self.rows
        changed, documents = self.writer().deltas(rows.universe, pairs)
        if not documents:
            return
        head = b"id: %d\nevent: delta\ndata: " % rows.version
        publish, ids, universe = self.fanout.publish, rows.ids, rows.universe
        for (index, r), document in zip(
            np.frombuffer(changed, dtype="<u4").reshape(-1, 2).tolist(), documents, strict=True
        ):
            resolution = RESOLUTIONS[r]
            if universe.last_ts_event(index, resolution) is None:
                # No bar yet: a delta would need one's close time; the row goes out whole.
                publish(resolution, ids[index], self.row_frame(ids[index], resolution))
            else:
                publish(resolution, ids[index], head + document + b"\n\n")

    def row_frame(self, instrument_id: str, resolution: str) -> bytes:
        return b"id: %d\n" % self.rows.version + frame("row", self.rows.row(instrument_id, resolution))


class Snapshot:
    """The ``row`` frames a new subscriber starts from, rendered in the same loop turn as it
    subscribed: they stand at the version its first live event follows."""

    def __init__(self, stream: RowStream, instrument_ids: list[str], resolutions: tuple[str, ...]) -> None:
        self._frames = [stream.row_frame(iid, r) for iid in instrument_ids for r in resolutions]
        self._next = 0

    def take(self, size: int) -> bytes:
        out, taken = [], 0
        while self._next < len(self._frames) and taken < size:
            out.append(self._frames[self._next])
            taken += len(out[-1])
            self._next += 1
        return b"".join(out)
