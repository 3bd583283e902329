"""The venue node's state and lifecycle: the composition root of its parts (the ingestion
actor, the durable series and stores, the ledgers, the fan-out hub), its framework node
(:mod:`spine.node.framework`) and its HTTP app (:mod:`spine.node.api`), run inside one asyncio
loop.

Start-up refuses a catalog volume that is not mounted and writable. The series reload from the
catalogs before the node connects (:mod:`spine.node.persist.reload`), so after a restart a
series that finished hydrating continues from its own newest close (its resume hint). Closed
bars are flushed to the catalogs every ``flush_secs``, and as soon as a series finishes
hydrating (so a backtest finds the history the node already serves; :mod:`spine.node.flushing`);
a stop (SIGINT, SIGTERM or ``stop()``) stops the node, then flushes everything before returning.
"""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nautilus_trader.live.node import TradingNode

from spine.fanout import FanOut
from spine.manifest import load_manifest
from spine.node.actor import IngestionActor
from spine.node.backfill import Backfill
from spine.node.config import ConfigError, NodeConfig
from spine.node.connection import ConnectionWatch
from spine.node.flushing import Flushing
from spine.node.framework import trading_node, venue_config
from spine.node.heap import settle_heap
from spine.node.hydration import HydrationBook
from spine.node.hydrator import FrameworkHistory, HistorySource, Hydrator, SimHistory
from spine.node.ledger import CoverageLedger
from spine.node.paper.operator import Operator
from spine.node.paper.reports import PaperReads
from spine.node.persist.confirmed_state import ConfirmedState
from spine.node.persist.hydration_state import Finished, HydrationState
from spine.node.persist.reload import reload_series
from spine.node.persist.sequences import Reservation
from spine.node.persist.series_book import SeriesBook
from spine.node.persist.store import AdmissionRefused, CatalogStore, Floors
from spine.node.repair import GapWatch, Repairer
from spine.node.status import EngineStatusProducer
from spine.node.view import ExecutionView
from spine.wire.bar_types import CHANNELS

if TYPE_CHECKING:
    from spine.node.venue_view import Imports

__all__ = ["NodeFailed", "VenueNode", "load_manifest"]

log = logging.getLogger("spine.node")


class VenueNode:
    """One venue process (see the module docs)."""

    def __init__(self, config: NodeConfig) -> None:
        self.config = config
        if config.venue == "catalog":  # refused before anything is written
            from spine.node.catalog_venue import check_catalog

            check_catalog(config)
        floors = Floors(**{k: getattr(config.floors, k) for k in ("min_free_inodes", "max_files", "min_free_bytes")})
        mount = Path(config.expect_mount) if config.expect_mount else None
        # Separate roots: EXTERNAL and INTERNAL are never relabelled or cross-filled.
        self.stores = {
            channel: CatalogStore(
                config.catalog_dir / channel.lower(),
                floors=floors,
                retention_ns=round(config.retention_days * 86_400) * 10**9,
                expect_mount=mount,
            )
            for channel in CHANNELS
        }
        self._check_venue()
        self.manifest = load_manifest(config.manifest)
        self.reservation = Reservation(Path(config.data_dir))
        self.book = SeriesBook(capacity=config.capacity, reserve=self.reservation)
        self.hub = FanOut()
        self.hydration = HydrationBook()
        self.hydration_state = HydrationState(Path(config.data_dir))
        self.ledger = CoverageLedger(config.node_id)
        self.run_id = f"{config.node_id}-{time.time_ns()}"
        self.status = EngineStatusProducer(self.run_id, ("EXTERNAL", "INTERNAL"))
        self.hydrator: Hydrator | None = None
        #: The catalog venue's imports, whose daily bars are served as imported.
        self.imports: Imports | None = None
        #: The catalog's backfill below the hydrated series (the simulated venue's).
        self.backfill: Backfill | None = None
        self.actor = IngestionActor(
            hub=self.hub,
            book=self.book,
            seconds_prefix=config.seconds_prefix,
            external_grace_ns=round(config.external_grace_secs * 1e9),
            retention=self.retention_state,
            on_discovery=self._on_discovery,
            on_bar=self._on_bar,
            exhausted=self._exhausted,
            ledger=self.ledger,
            status=self.status,
        )
        self.node: TradingNode | None = None
        self.clients: list[Any] = []
        self.connection = ConnectionWatch(self.status, self.clients)
        #: A paper node's sandbox execution client (built with the framework node) and its reads.
        self.executions: list[Any] = []
        self.execution: ExecutionView | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._instruments_written: asyncio.Task[None] | None = None
        #: Set when a series finished hydrating: the run loop flushes at once, not at its period.
        self._flush_wanted = asyncio.Event()
        self.confirmed_state = ConfirmedState(Path(config.data_dir))
        self.repairer: Repairer | None = None
        #: Whether a gap is unresolved now (health's UNRESOLVED_GAPS).
        self.gaps = GapWatch(self.book)
        data_dir = Path(config.data_dir)
        self.reloaded = reload_series(self.book, self.stores, data_dir, self.reservation)
        self.flushing = Flushing(
            self.book, self.stores, data_dir, self.reservation, self.status, self.hydration_state, self._settled
        )
        self.confirmed_state.apply(self.book)

    @property
    def refused_writes(self) -> int:
        """Catalog and state writes refused so far (health's CATALOG_WRITES_REFUSED)."""
        return self.flushing.refused_writes

    def retention_state(self, instrument_id: str) -> str:
        if self.manifest is None:
            return "unmanaged"
        return "retained" if instrument_id in self.manifest else "unretained"

    def retained(self, instrument_id: str) -> bool:
        """Unretained instruments get zero ingestion demand."""
        return self.retention_state(instrument_id) != "unretained"

    def _check_venue(self) -> None:
        """A data directory holds one venue's series: its series state and hydration files
        are written whole from what the node holds, so a node of another venue (a renamed
        ``sim.venue_name``) would drop them. Refused before anything is written."""
        stored = {venue for store in self.stores.values() for venue in store.venues()} - {self.config.venue_name}
        if stored:
            raise ConfigError(
                f"data_dir {self.config.data_dir} holds series of venue {', '.join(sorted(stored))}; "
                f"this node's venue is {self.config.venue_name}: a data directory holds one venue's "
                "series (use another data_dir)"
            )

    def _exhausted(self, instrument_id: str) -> bool:
        return self.hydrator is not None and instrument_id in self.hydrator.exhausted

    def _on_discovery(self, instrument_ids: list[str]) -> None:
        instruments = [i for i in self.actor.cache.instruments() if str(i.id) in set(instrument_ids)]
        # Writing the instrument files takes a second or two: on a worker thread, while the
        # node starts serving. Every flush waits for it, so no bar is durable before its
        # instrument (a reload skips bars whose instrument it cannot find).
        self._instruments_written = asyncio.get_running_loop().create_task(
            asyncio.to_thread(self._write_instruments, instruments)
        )
        if self.hydrator is not None:
            self._tasks.append(asyncio.get_running_loop().create_task(self._hydrate(instrument_ids)))
            self._tasks.append(asyncio.get_running_loop().create_task(self.hydrator.retry_forever()))
            if not self.hydrator.confirms_empty:
                # A source that cannot confirm a minute empty (the catalog venue: the import is
                # all it has) would answer every repair as it answered hydration: no repair.
                return
            self.repairer = Repairer(
                book=self.hydration,
                series=self.book,
                source=self.hydrator.source,
                now=self.hydrator.now,
                take=lambda _, bar: self.actor.on_bar(bar),
                confirm=self.actor.confirm_empty,
                state=self.confirmed_state,
                grace_ns=self.hydrator.grace_ns,
            )
            self._tasks.append(asyncio.get_running_loop().create_task(self.repairer.run_forever()))

    async def _hydrate(self, instrument_ids: list[str]) -> None:
        """Hydrate the series, then backfill the catalog below them where the venue can."""
        assert self.hydrator is not None
        await self.hydrator.hydrate_all(instrument_ids)
        if self.backfill is not None:
            await self.backfill.run(instrument_ids)

    def _write_instruments(self, instruments: list[Any]) -> None:
        for store in self.stores.values():
            try:
                store.write_instruments(instruments)
            except AdmissionRefused:
                self.flushing.refused_writes += 1

    async def _instruments_durable(self) -> None:
        if self._instruments_written is not None:
            await asyncio.wait({self._instruments_written})

    def _hydrator_for(self, client: Any) -> Hydrator:
        """History comes from the venue client: the simulated venue and the catalog venue answer
        directly (the former can tell every outcome apart); an adapter answers the framework's
        request_bars."""
        now = getattr(client, "venue_now", time.time_ns)
        return Hydrator(
            book=self.hydration,
            series=self.book,
            store=self.stores["EXTERNAL"],
            source=self._history_source(client),
            now=now,
            window_minutes=self.config.hydrate_minutes,
            finished=self.hydration_state.finished,
            grace_ns=round(self.config.external_grace_secs * 1e9),
            on_finished=lambda instrument_id: self._flush_wanted.set(),
        )

    def _history_source(self, client: Any) -> HistorySource:
        own: HistorySource | None = getattr(client, "history_source", None)  # the catalog venue's
        if own is not None:
            self.imports = getattr(client, "imports", None)
            return own
        if not hasattr(client, "history"):
            return FrameworkHistory(self.actor)
        # Generated history costs no venue's rate limit: the catalog is backfilled to the retention.
        sim = SimHistory(client)
        self.backfill = Backfill(self.stores["EXTERNAL"], sim, self.stores["EXTERNAL"].retention_ns or 0)
        return sim

    def _on_bar(self, instrument_id: str, channel: str, bar: Any) -> None:
        self.stores[channel].append(bar)

    def _settled(self) -> dict[str, Finished] | None:
        """The instruments that finished hydrating with durable history (None: no hydrator)."""
        return None if self.hydrator is None else self.hydrator.settled()

    def flush(self, *, final: bool = False) -> None:
        """Write every pending closed bar and the series' state (see :meth:`Flushing.flush`)."""
        self.flushing.flush(final=final)

    def consolidate(self) -> None:
        """Merge each bar type's files into one, from its series (see :meth:`Flushing.consolidate`)."""
        self.flushing.consolidate()

    async def flush_off_loop(self, *, consolidate: bool = False) -> None:
        """:meth:`flush` (or :meth:`consolidate`) with the file writing on a worker thread, once
        the instrument files are durable (no bar is durable before its instrument)."""
        await self._instruments_durable()
        await self.flushing.off_loop(consolidate=consolidate)

    def _http_server(self) -> Any:
        from spine.http.serve import embedded_server
        from spine.node.api import build_app
        from spine.node.venue_view import VenueView

        app = build_app(
            VenueView(self), heartbeat_secs=self.config.stream_heartbeat_secs, body_secs=self.config.http_body_secs
        )
        return embedded_server(app, host=self.config.host, port=self.config.port, backlog=self.config.http_backlog)

    def build(self, loop: asyncio.AbstractEventLoop) -> TradingNode:
        """The framework node over the actor (:mod:`spine.node.framework`) and the hydrator
        over the venue's client."""
        venue = venue_config(self.config, self.book)
        operator = Operator() if self.config.sandbox.enabled else None
        node = trading_node(self.config, venue, self.actor, self.clients, loop, self.executions, operator)
        self.node = node
        if operator is not None:
            self.execution = PaperReads(node, self.config.venue_name, operator)
        self.hydrator = self._hydrator_for(self.clients[-1]) if self.clients else None
        return node

    async def run(self, stop: asyncio.Event, *, serve_http: bool = False) -> None:
        """Run until ``stop`` is set, flushing periodically; always stops and persists. With
        ``serve_http`` the node's HTTP app runs on Granian in this same loop.

        The framework's run ending with an error, or the HTTP server ending, fails the run at
        once: the engine status goes FAILED with the error (the spec's RUNNING -> FAILED), the
        node stops and flushes as on a clean stop, then :class:`NodeFailed` is raised.
        """
        node = self.node or self.build(asyncio.get_running_loop())
        settle_heap()
        task = asyncio.create_task(node.run_async())
        self._tasks.append(asyncio.create_task(self.connection.watch()))
        server = self._http_server() if serve_http else None
        http_task = asyncio.create_task(server.serve()) if server is not None else None
        stopping = asyncio.ensure_future(stop.wait())
        watched = {stopping, task} | ({http_task} if http_task is not None else set())
        wanted = asyncio.ensure_future(self._flush_wanted.wait())
        loop = asyncio.get_running_loop()
        next_consolidation = loop.time() + self.config.consolidation_secs
        failure: str | None = None
        try:
            while not stop.is_set():
                done, _ = await asyncio.wait(
                    watched | {wanted}, timeout=self.config.flush_secs, return_when=asyncio.FIRST_COMPLETED
                )
                if stopping in done:
                    break
                if done - {wanted}:
                    failure = _failure(task, http_task)
                    break
                if wanted in done:  # hydrated history: durable now (every finish meanwhile joins this flush)
                    self._flush_wanted.clear()
                    wanted = asyncio.ensure_future(self._flush_wanted.wait())
                due = loop.time() >= next_consolidation
                await self.flush_off_loop(consolidate=due)
                if due:
                    next_consolidation = loop.time() + self.config.consolidation_secs
        finally:
            stopping.cancel()
            wanted.cancel()
            for background in self._tasks:
                background.cancel()
            if failure is not None:
                self._fail(failure)
            await node.stop_async()
            await asyncio.wait({task})
            if failure is None and not task.cancelled() and task.exception() is not None:
                failure = _failure(task, None)
                self._fail(failure)
            await self._instruments_durable()
            self.flush(final=True)
            # HTTP stops last: until then a client reads the run's terminal state (COMPLETED
            # or FAILED) and every bar the stop flushed.
            if server is not None and http_task is not None:
                server.stop()
                await asyncio.wait({http_task}, timeout=5)
            node.kernel.dispose()
        if failure is not None:
            raise NodeFailed(failure)

    def _fail(self, error: str) -> None:
        """The run failed: FAILED with ``error`` (a CHECKPOINTED run resumes first, as the
        table has no CHECKPOINTED -> FAILED row). Before the run began (STARTING) the table
        has no row at all: the error is recorded and the lifecycle left as it is."""
        log.error("the run failed: %s", error)
        if self.status.lifecycle == "CHECKPOINTED":
            self.status.resume()
        if self.status.lifecycle == "RUNNING":
            self.status.fail(error)
        elif self.status.lifecycle not in ("COMPLETED", "FAILED"):
            self.status.record_error(error)


class NodeFailed(RuntimeError):
    """The run failed (the framework's run raised, or the HTTP server ended); the message is
    the engine status' ``last_error``."""


def _failure(task: asyncio.Task[Any], http_task: asyncio.Task[Any] | None) -> str:
    """Why the run ended on its own: the first line of the error (Granian's carry a Rust
    backtrace below it)."""
    for what, ended in (("the node's run", task), ("the HTTP server", http_task)):
        if ended is None or not ended.done():
            continue
        error = None if ended.cancelled() else ended.exception()
        if error is None:
            return f"{what} ended on its own"
        return f"{what} failed: {(str(error).strip().splitlines() or [type(error).__name__])[0]}"
    return "the run ended on its own"
