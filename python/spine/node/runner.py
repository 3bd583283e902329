"""The venue node: a market-data-only ``TradingNode`` (no execution or risk client) with the
ingestion actor, the durable series and stores, and the fan-out hub, run inside an asyncio
loop that other parts (the HTTP app) share.

Start-up refuses a catalog volume that is not mounted and writable. The series reload from the
catalogs before the node connects, so after a restart a series that finished hydrating
continues from its own newest close (its resume hint). Closed bars are flushed to the catalogs
every ``flush_secs``, and as soon as a series finishes hydrating (so a backtest finds the
history the node already serves); a stop (SIGINT, SIGTERM or ``stop()``) stops the node, then
flushes everything before returning.
"""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
from nautilus_trader.config import LiveDataEngineConfig, LiveExecEngineConfig, LoggingConfig, TradingNodeConfig
from nautilus_trader.live.node import TradingNode

from spine.fanout import FanOut
from spine.node.actor import IngestionActor
from spine.node.config import ConfigError, NodeConfig
from spine.node.connection import ConnectionWatch
from spine.node.heap import settle_heap
from spine.node.hydration import HydrationBook
from spine.node.confirmed_state import ConfirmedState
from spine.node.hydration_state import HydrationState
from spine.node.hydrator import FrameworkHistory, HistorySource, Hydrator, SimHistory
from spine.node.ledger import CoverageLedger
from spine.manifest import load_manifest
from spine.node.status import EngineStatusProducer
from spine.node.profiles import data_client
from spine.node.repair import GapWatch, Repairer
from spine.node import series_state
from spine.node.checkpoint import Checkpoint
from spine.node.sequences import Reservation
from spine.node.series_book import SeriesBook, mantissas
from spine.wire.bar_types import CHANNELS
from spine.node.store import AdmissionRefused, CatalogStore, Floors

__all__ = ["NodeFailed", "VenueNode", "load_manifest"]

MINUTE_NS = 60_000_000_000

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
            channel: CatalogStore(config.catalog_dir / channel.lower(), floors=floors, capacity=config.capacity,
                                  expect_mount=mount)
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
        self.actor = IngestionActor(hub=self.hub, book=self.book, seconds_prefix=config.seconds_prefix,
                                    external_grace_ns=round(config.external_grace_secs * 1e9),
                                    retention=self.retention_state, on_discovery=self._on_discovery, on_bar=self._on_bar,
                                    exhausted=self._exhausted, ledger=self.ledger, status=self.status)
        self.node: TradingNode | None = None
        self.clients: list[Any] = []
        self.connection = ConnectionWatch(self.status, self.clients)
        self._tasks: list[asyncio.Task[None]] = []
        self._instruments_written: asyncio.Task[None] | None = None
        self.refused_writes = 0
        #: Set when a series finished hydrating: the run loop flushes at once, not at its period.
        self._flush_wanted = asyncio.Event()
        self.confirmed_state = ConfirmedState(Path(config.data_dir))
        self.repairer: Repairer | None = None
        #: Whether a gap is unresolved now (health's UNRESOLVED_GAPS).
        self.gaps = GapWatch(self.book)
        self.reloaded = self._reload()

    # --- retention --------------------------------------------------------------------------------

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
            raise ConfigError(f"data_dir {self.config.data_dir} holds series of venue {', '.join(sorted(stored))}; "
                              f"this node's venue is {self.config.venue_name}: a data directory holds one venue's "
                              "series (use another data_dir)")

    # --- reload and persistence -----------------------------------------------------------------------

    def _reload(self) -> int:
        """Load every stored series back into memory; returns the bars reloaded. After a
        crash every series continues above the sequence reservation (numbers served after
        the last flush are nowhere else); after a clean stop from its saved state."""
        total = 0
        floor = self.reservation.floor
        for channel, store in self.stores.items():
            saved = series_state.load(Path(self.config.data_dir), channel)
            precisions = {str(i.id): (i.price_precision, i.size_precision) for i in store.instruments()}
            for bar_type in store.bar_types():
                instrument_id = bar_type.split("-1-MINUTE-")[0]
                if instrument_id not in precisions or not bar_type.endswith(f"-1-MINUTE-LAST-{channel}"):
                    continue
                bars = store.load(bar_type)
                if not bars:
                    continue
                self.book.register(instrument_id, *precisions[instrument_id])
                p = self.book.precision(instrument_id)
                rows = np.array([mantissas(b, p.price, p.size) for b in bars], dtype=np.int64)
                ts = np.ascontiguousarray(rows[:, 0].astype(np.uint64))
                columns = [np.ascontiguousarray(rows[:, k]) for k in range(1, 6)]
                series = self.book.series(instrument_id, channel)
                total += series.extend(ts, *columns)
                known = saved.get(instrument_id)
                try:
                    series_state.apply(series, known, floor=0 if self.reservation.clean and known else floor)
                except ValueError as error:  # a damaged state file: numbered afresh above the floor
                    log.warning("series state of %s %s not applied: %s", instrument_id, channel, error)
                    series_state.apply(series, None, floor=floor)
        self.book.floor = floor
        self._observed = self._coverage()
        self.confirmed_state.apply(self.book)
        return total

    def _exhausted(self, instrument_id: str) -> bool:
        return self.hydrator is not None and instrument_id in self.hydrator.exhausted

    def _on_discovery(self, instrument_ids: list[str]) -> None:
        instruments = [i for i in self.actor.cache.instruments() if str(i.id) in set(instrument_ids)]
        # Writing the instrument files takes a second or two: on a worker thread, while the
        # node starts serving. Every flush waits for it, so no bar is durable before its
        # instrument (a reload skips bars whose instrument it cannot find).
        self._instruments_written = asyncio.get_running_loop().create_task(
            asyncio.to_thread(self._write_instruments, instruments))
        if self.hydrator is not None:
            self._tasks.append(asyncio.get_running_loop().create_task(self.hydrator.hydrate_all(instrument_ids)))
            self._tasks.append(asyncio.get_running_loop().create_task(self.hydrator.retry_forever()))
            if not self.hydrator.confirms_empty:
                # A source that cannot confirm a minute empty (the catalog venue: the import is
                # all it has) would answer every repair as it answered hydration: no repair.
                return
            self.repairer = Repairer(book=self.hydration, series=self.book, source=self.hydrator.source,
                                     now=self.hydrator.now, take=lambda _, bar: self.actor.on_bar(bar),
                                     confirm=self.actor.confirm_empty,
                                     state=self.confirmed_state, grace_ns=self.hydrator.grace_ns)
            self._tasks.append(asyncio.get_running_loop().create_task(self.repairer.run_forever()))

    def _write_instruments(self, instruments: list[Any]) -> None:
        for store in self.stores.values():
            try:
                store.write_instruments(instruments)
            except AdmissionRefused:
                self.refused_writes += 1

    async def _instruments_durable(self) -> None:
        if self._instruments_written is not None:
            await asyncio.wait({self._instruments_written})

    def _hydrator_for(self, client: Any) -> Hydrator:
        """History comes from the venue client: the simulated venue and the catalog venue answer
        directly (the former can tell every outcome apart); an adapter answers the framework's
        request_bars."""
        now = getattr(client, "venue_now", time.time_ns)
        return Hydrator(book=self.hydration, series=self.book, store=self.stores["EXTERNAL"],
                        source=self._history_source(client), now=now, window_minutes=self.config.hydrate_minutes,
                        finished=self.hydration_state.finished,
                        grace_ns=round(self.config.external_grace_secs * 1e9),
                        on_finished=lambda instrument_id: self._flush_wanted.set())

    def _history_source(self, client: Any) -> HistorySource:
        own: HistorySource | None = getattr(client, "history_source", None)  # the catalog venue's
        if own is not None:
            return own
        return SimHistory(client) if hasattr(client, "history") else FrameworkHistory(self.actor)

    def _on_bar(self, instrument_id: str, channel: str, bar: Any) -> None:
        self.stores[channel].append(bar)

    def flush(self, *, final: bool = False) -> None:
        """Write every pending closed bar (refusals are counted; the bars stay pending) and
        the series' state (sequences, coverage). A flush that wrote everything is a
        checkpoint of the run. The ``final`` flush (at a stop) also makes the files hold each
        whole series, which retention rewrites trim (see ``CatalogStore.complete``), and, when
        it wrote everything, marks the sequence reservation clean: the state files now hold
        every number the run handed out."""
        written = self._flushed(self._write(Checkpoint(self.book, self.stores), complete=final))
        if final and written:
            self.reservation.close(max((s.last_sequence for _, _, s in self.book.held()), default=0))

    def consolidate(self) -> None:
        """The periodic consolidation: each bar type's files merged into one, from its series
        (which also makes late bars durable). Refusals are counted like flushes."""
        self._flushed(self._write(Checkpoint(self.book, self.stores), consolidate=True))

    async def flush_off_loop(self, *, consolidate: bool = False) -> None:
        """:meth:`flush` (or :meth:`consolidate`) with the file writing on a worker thread: a
        flush writes a file per bar type, tenths of a second the loop's streams and requests
        must not wait for. What it writes is taken here, on the loop, in one step (see
        ``spine.node.checkpoint``); counters and status change back on the loop."""
        await self._instruments_durable()
        checkpoint = Checkpoint(self.book, self.stores)
        self._flushed(await asyncio.to_thread(self._write, checkpoint, consolidate=consolidate))

    def _write(self, checkpoint: Checkpoint, *, consolidate: bool = False,
               complete: bool = False) -> list[tuple[str, str, AdmissionRefused]]:
        """Write the series' state, every store, then the state again, all from
        ``checkpoint``; the refusals met, as (what, channel, refusal).

        The sequences reach disk before the bars they number: a crash in between leaves
        numbers for bars the catalogs lack (ignored at reload), never catalog bars without
        their numbers. Until the bars are written the file keeps the spans observed as of the
        last complete write, so such a crash cannot claim minutes whose bars were lost."""
        refusals = self._write_state(checkpoint, self._observed)
        refusals += self._write_stores(checkpoint, consolidate=consolidate, complete=complete)
        refusals += self._write_state(checkpoint)
        self._observed = checkpoint.coverage()
        return refusals

    def _write_state(self, checkpoint: Checkpoint,
                     observed: dict[str, dict[str, list[tuple[int, int]]]] | None = None,
                     ) -> list[tuple[str, str, AdmissionRefused]]:
        refusals = []
        for channel in self.stores:
            try:
                state = checkpoint.state(channel, None if observed is None else observed.get(channel, {}))
                series_state.write(Path(self.config.data_dir), channel, state)
            except OSError as error:
                refusals.append(("series state write", channel, AdmissionRefused("io_error", str(error))))
        return refusals

    def _coverage(self) -> dict[str, dict[str, list[tuple[int, int]]]]:
        """Every series' observed spans, per channel and instrument."""
        out: dict[str, dict[str, list[tuple[int, int]]]] = {channel: {} for channel in self.stores}
        for instrument_id, channel, series in self.book.held():
            out[channel][instrument_id] = series.coverage()
        return out

    def _write_stores(self, checkpoint: Checkpoint, *, consolidate: bool,
                      complete: bool = False) -> list[tuple[str, str, AdmissionRefused]]:
        refusals = []
        for channel, store in self.stores.items():
            def series_bars(bar_type: str, channel: str = channel) -> list[Any]:
                return checkpoint.bars(bar_type, channel=channel)

            def series_len(bar_type: str, channel: str = channel) -> int:
                return checkpoint.length(bar_type, channel=channel)

            try:
                store.write(checkpoint.pending[channel], series_bars)
            except AdmissionRefused as refused:
                refusals.append(("write", channel, refused))
                continue
            if consolidate:
                try:
                    store.consolidate(series_bars)
                except AdmissionRefused as refused:
                    refusals.append(("consolidation", channel, refused))
            if complete:
                try:
                    store.complete(series_bars, series_len)
                except AdmissionRefused as refused:
                    refusals.append(("completion", channel, refused))
        return refusals

    def _flushed(self, refusals: list[tuple[str, str, AdmissionRefused]]) -> bool:
        """Count and report ``refusals``; whether there were none."""
        for what, channel, refused in refusals:
            self.refused_writes += 1
            self.status.record_error(f"catalog {what} refused ({channel}): {refused}")
            log.warning("catalog %s refused (%s): %s", what, channel, refused)
        if not refusals and self.status.lifecycle == "RUNNING":
            self.status.checkpoint()  # the actor resumes the run with its next bar
        self._save_hydration()
        return not refusals

    def _save_hydration(self) -> None:
        """Keep which instruments finished hydrating (with durable history) for a restart."""
        if self.hydrator is not None:
            try:
                self.hydration_state.save(self.hydrator.settled())
            except OSError as error:
                self.status.record_error(f"hydration state write failed: {error}")
                log.warning("hydration state write failed: %s", error)

    def _http_server(self) -> Any:
        from spine.node.api import build_app
        from spine.http.serve import embedded_server
        from spine.node.venue_view import VenueView

        app = build_app(VenueView(self), heartbeat_secs=self.config.stream_heartbeat_secs,
                        body_secs=self.config.http_body_secs)
        return embedded_server(app, host=self.config.host, port=self.config.port, backlog=self.config.http_backlog)

    # --- running ------------------------------------------------------------------------------------

    def _venue_config(self) -> NodeConfig:
        """The configuration the venue client is built from: an accelerated simulated venue
        without a configured start carries on from the newest reloaded close (its clock runs
        ahead of the wall, so starting from the wall again would replay minutes the series
        already holds, every bar a duplicate); otherwise as configured."""
        if self.config.venue != "sim" or self.config.sim.start_ns is not None:
            return self.config
        closes = [s.resume_hint()["newest_ts_event"] for _, _, s in self.book.held()]
        newest = max((c for c in closes if c is not None), default=0)
        wall = time.time_ns() // MINUTE_NS * MINUTE_NS
        if newest <= wall:
            return self.config
        return msgspec.structs.replace(self.config, sim=msgspec.structs.replace(self.config.sim, start_ns=newest))

    def build(self, loop: asyncio.AbstractEventLoop) -> TradingNode:
        name, client_config, factory = data_client(self._venue_config())
        node_config = TradingNodeConfig(
            trader_id=f"SPINE-{abs(hash(self.config.node_id)) % 1000:03d}",
            logging=LoggingConfig(log_level=self.config.log_level),
            exec_engine=LiveExecEngineConfig(reconciliation=False),
            # The spec's bar rules for any bar the engine itself aggregates: no flat bar for a
            # minute with no trades, no partial first bar.
            data_engine=LiveDataEngineConfig(time_bars_build_with_no_updates=False,
                                             time_bars_skip_first_non_full_bar=True),
            data_clients={name: client_config},
            timeout_connection=10.0, timeout_post_stop=0.05, timeout_disconnection=2.0, timeout_portfolio=1.0,
        )
        node = TradingNode(config=node_config, loop=loop)
        node.trader.add_actor(self.actor)
        node.add_data_client_factory(name, _capturing(factory, self.clients))
        node.build()
        self.node = node
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
                done, _ = await asyncio.wait(watched | {wanted}, timeout=self.config.flush_secs,
                                             return_when=asyncio.FIRST_COMPLETED)
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


def _capturing(factory: type, sink: list[Any]) -> type:
    """The venue's factory, keeping each client it builds (the node reads its history)."""

    class Capturing(factory):
        @staticmethod
        def create(**kwargs: Any) -> Any:
            client = factory.create(**kwargs)  # type: ignore[attr-defined]
            sink.append(client)
            return client

    return Capturing
