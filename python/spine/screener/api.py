"""The screener's routes: its feature registry, current rows and snapshots (both
``svc.screener_snapshot``: rows as of one instant, one identity over them), screens (over the
current rows, or point-in-time: :mod:`spine.screener.as_of`), its own health
(``svc.screener_health``) and the process health every app answers (``svc.health``).

A snapshot is taken when its first page is asked and kept while a few newer ones are taken,
so every page of it carries the same rows, ``as_of``, ``snapshot_id`` and ``sequence``.

Handlers and the app read the screener through :class:`ScreenerView`, which
:class:`spine.screener.service.Screener` satisfies; this module never imports the service,
and ``spine.screener.main`` puts the two together."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from spine._core import identity
from spine.features import feature_specs
from spine.http.app import App
from spine.http.errors import HttpError
from spine.http.registry import registry_document
from spine.http.request import Query, path_instrument_id
from spine.http.routes import Operation
from spine.http.schema_routes import SchemaHandlers
from spine.http.send_queue import SendQueue
from spine.http.streams import pump
from spine.http.v1 import records
from spine.screener.admission import ScreenGate
from spine.screener.as_of import is_point_in_time, screen_as_of
from spine.screener.config import ScreenerConfig
from spine.screener.feed import NodeFeed
from spine.screener.instrument import instrument_document
from spine.screener.observations import Observations
from spine.screener.rows import RESOLUTIONS, Rows
from spine.screener.screens import evaluate
from spine.screener.stream import RowStream
from spine.screener.stream import Snapshot as StreamSnapshot
from spine.wire.cursors import InvalidCursor, decode_cursor, encode_cursor
from spine.wire.head import head

__all__ = ["ScreenerApp", "ScreenerHandlers", "ScreenerView"]


class ScreenerView(Protocol):
    """What the screener's handlers and app read of the running screener: its configuration,
    rows, stream, observations, feeds and screen gate, and its health's figures."""

    @property
    def config(self) -> ScreenerConfig: ...
    @property
    def rows(self) -> Rows: ...
    @property
    def stream(self) -> RowStream: ...
    @property
    def observations(self) -> Observations: ...
    @property
    def feeds(self) -> Sequence[NodeFeed]: ...
    @property
    def screens(self) -> ScreenGate: ...

    def process_state(self) -> str:
        """STARTING, RUNNING, DEGRADED or STOPPING."""
        ...

    def input_lag(self) -> int | None: ...
    def checkpoint_age(self) -> int | None: ...
    def connections(self) -> dict[str, Any]: ...
    def last_error(self) -> str | None: ...


#: Snapshots kept for their later pages.
KEPT_SNAPSHOTS = 8


@dataclass(frozen=True)
class Snapshot:
    route: str
    as_of: int
    sequence: int
    snapshot_id: str
    rows: list[dict[str, Any]]


class ScreenerHandlers:
    """Handlers over one running screener, read through its :class:`ScreenerView`."""

    def __init__(self, screener: ScreenerView) -> None:
        self.screener = screener
        self._snapshots: OrderedDict[str, Snapshot] = OrderedDict()

    def health_get(self, query: Query | None, params: dict[str, str]) -> dict[str, Any]:
        state = self.screener.process_state()
        reasons = ["UPSTREAM_UNAVAILABLE"] if state == "DEGRADED" else []
        return {
            **head("svc.health"),
            "live": True,
            "ready": state in ("RUNNING", "DEGRADED"),
            "degraded": bool(reasons),
            "degraded_reasons": reasons,
            "engine_status": None,
            "point_in_time_screens": self.screener.screens.document(),
            "ts_event": str(time.time_ns()),
        }

    def registry_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        return registry_document(
            self.screener.config.screener_id,
            "screener",
            deployment_mode=self.screener.config.mode,
            warming=self.screener.process_state() == "STARTING",
        )

    def screener_health(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        screener, now = self.screener, time.time_ns()
        lag = screener.input_lag()
        return {
            **head("svc.screener_health"),
            "process_state": screener.process_state(),
            "input_lag_nanos": None if lag is None else str(lag),
            "processed": screener.rows.processed,
            "dropped": 0,
            "checkpoint_age_nanos": None if (age := screener.checkpoint_age()) is None else str(age),
            "connections": screener.connections(),
            "egress": screener.stream.egress_document(),
            "last_error": screener.last_error(),
            "ts_event": str(now),
        }

    def screener_features(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        items, cursor = query.page("/v2/screener/features", feature_specs())
        return {**head("svc.feature_page"), "items": items, "next_cursor": cursor}

    def screener_rows(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        iid = query.instrument_id()
        resolution = query.choice("resolution", RESOLUTIONS)
        if iid is not None and iid not in self.screener.rows.index:
            raise HttpError("NOT_FOUND", f"{iid} has no rows on this screener (see /v2/screener/snapshot)")
        return self._page(
            f"/v2/screener/rows?instrument_id={iid or ''}&resolution={resolution or ''}",
            query,
            lambda: [
                self.screener.rows.row(i, r)
                for i in ([iid] if iid else self.screener.rows.ids)
                for r in ([resolution] if resolution else RESOLUTIONS)
            ],
        )

    def v1_screener_rows_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        """v1 ``/screener-rows``: every current ``svc.feature_row``, in snapshot order."""
        rows = self.screener.rows
        return records("screener_rows", query, [rows.row(i, r) for i in rows.ids for r in RESOLUTIONS])

    def screener_snapshot(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        rows = self.screener.rows
        return self._page(
            "/v2/screener/snapshot", query, lambda: [rows.row(i, r) for i in rows.ids for r in RESOLUTIONS]
        )

    def screener_instrument(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        iid = path_instrument_id(params["id"])
        rows = self.screener.rows
        if iid not in rows.index:
            raise HttpError("NOT_FOUND", f"{iid} has no rows on this screener (see /v2/screener/snapshot)")
        return instrument_document(
            iid, [rows.row(iid, r) for r in RESOLUTIONS], [rows.state(iid, r) for r in RESOLUTIONS]
        )

    def screener_observations(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        iid = query.instrument_id()
        resolution = query.choice("resolution", RESOLUTIONS)
        start, end = query.span()
        limit = query.limit(100)
        if iid is not None and iid not in self.screener.rows.index:
            raise HttpError("NOT_FOUND", f"{iid} has no rows on this screener (see /v2/screener/snapshot)")
        route = (
            f"/v2/screener/observations?instrument_id={iid or ''}&resolution={resolution or ''}"
            f"&start={'' if start is None else start}&end={'' if end is None else end}"
        )
        after = None
        if (cursor := query.text("cursor")) is not None:
            try:
                after = decode_cursor(route, cursor)
            except InvalidCursor as error:
                raise HttpError("INVALID_CURSOR", str(error).split(": ", 1)[-1]) from None
        kept = self.screener.observations.page(
            instrument_id=iid, resolution=resolution, start=start, end=end, after=after
        )
        items = kept[:limit]
        more = len(kept) > limit
        return {
            **head("svc.observation_page"),
            "items": [stored.document for stored in items],
            "next_cursor": encode_cursor(route, items[-1].sequence) if more else None,
        }

    def screener_screen(
        self, query: Query, params: dict[str, str], body: bytes
    ) -> dict[str, Any] | Coroutine[Any, Any, dict[str, Any]]:
        """The current rows screened at once; a point-in-time screen (``as_of`` set) is a
        coroutine the app awaits (it reads the nodes' history), admitted by the screener's
        :class:`~spine.screener.admission.ScreenGate`."""
        screener = self.screener
        if is_point_in_time(body):
            return screener.screens.run(
                lambda: screen_as_of(body, screener.feeds, screener.rows, screener.config.warm_concurrency)
            )
        return evaluate(body, screener.rows.table(), screener.rows.row, time.time_ns())

    def _page(self, route: str, query: Query, take: Any) -> dict[str, Any]:
        snapshot = self._snapshot(route, query.text("cursor"), take)
        items, cursor = query.page(snapshot.route, snapshot.rows)
        return {
            **head("svc.screener_snapshot"),
            "as_of": str(snapshot.as_of),
            "snapshot_id": snapshot.snapshot_id,
            "sequence": snapshot.sequence,
            "rows": items,
            "next_cursor": cursor,
        }

    def _snapshot(self, route: str, cursor: str | None, take: Any) -> Snapshot:
        """The snapshot a cursor pages (one of those kept), or a fresh one for a first page."""
        if cursor is not None:
            for snapshot in reversed(self._snapshots.values()):
                if snapshot.route.startswith(route + "@"):
                    try:
                        decode_cursor(snapshot.route, cursor)
                    except InvalidCursor:
                        continue
                    return snapshot
            raise HttpError(
                "INVALID_CURSOR",
                f"this cursor pages no snapshot kept here (the newest "
                f"{KEPT_SNAPSHOTS} are kept, and only in this process); start again "
                "without a cursor",
            )
        version = self.screener.rows.version
        key = f"{route}@{version}"
        kept = self._snapshots.get(key)
        if kept is not None:
            return kept
        rows = take()
        fresh = self._snapshots[key] = Snapshot(key, time.time_ns(), version, identity("snapshot_id", rows), rows)
        if len(self._snapshots) > KEPT_SNAPSHOTS:
            self._snapshots.popitem(last=False)
        return fresh


class ScreenerApp(App):
    """The screener's app: its handlers, the schema set, its stream, and of the v1 surface
    ``/screener-rows``."""

    def __init__(self, screener: ScreenerView) -> None:
        self.screener = screener
        self.handlers = ScreenerHandlers(screener)
        super().__init__(
            "screener",
            (self.handlers, SchemaHandlers()),
            (self.handlers,),
            deployment_mode=screener.config.mode,
            body_secs=screener.config.http_body_secs,
        )

    def health_bytes(self) -> Any:
        return None  # answered by the handler: the document is cheap and always current

    async def _stream(self, op: Operation, query: Query, scope: Any, proto: Any) -> None:
        """``GET /v2/stream/screener`` (see :mod:`spine.screener.stream`)."""
        stream, rows = self.screener.stream, self.screener.rows
        subscribers = stream.subscribers
        try:
            iid = query.instrument_id()
            resolution = query.choice("resolution", RESOLUTIONS)
            if iid is not None and iid not in rows.index:
                raise HttpError("NOT_FOUND", f"{iid} has no rows on this screener (see /v2/screener/snapshot)")
            if subscribers.open >= subscribers.limit:
                raise HttpError(
                    "SUBSCRIBERS_FULL", f"the screener stream has its {subscribers.limit} subscribers; retry later"
                )
        except HttpError:
            subscribers.refused += 1
            raise
        resolutions = RESOLUTIONS if resolution is None else (resolution,)
        subscription = stream.fanout.subscribe(
            instruments=None if iid is None else [iid], kinds=None if resolution is None else resolutions
        )
        snapshot = StreamSnapshot(stream, list(rows.ids) if iid is None else [iid], resolutions)
        subscribers.open += 1
        subscribers.accepted += 1
        try:
            await pump(
                proto,
                subscription,
                snapshot,
                None,
                self.screener.config.stream_heartbeat_secs,
                SendQueue(scope.server, scope.client),
                egress=stream.egress,
                lossless=True,
            )
        finally:
            subscribers.open -= 1
