"""The gateway process's state and lifecycle: its upstreams (looked at every
``refresh_secs``), the relay, the market streams' feeds (:mod:`spine.gateway.streams`), the job
store, the watch over its queue and workers (:mod:`spine.gateway.queue_watch`) and the study
scheduler (:mod:`spine.studies.scheduler`), all in one event loop with the app it serves
(:mod:`spine.gateway.api`, given by :mod:`spine.gateway.main`)."""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

from spine.gateway.catalogs import held_in
from spine.gateway.config import GatewayConfig
from spine.gateway.queue_watch import QueueWatch
from spine.gateway.relay import Relay
from spine.gateway.streams import Feeds
from spine.gateway.upstream_table import Upstreams
from spine.http.app import App
from spine.http.serve import embedded_server
from spine.jobs.request import ExecutionConfig
from spine.jobs.store import Store
from spine.studies.scheduler import Scheduler
from spine.studies.storage import open_storage

__all__ = ["Gateway"]

log = logging.getLogger("spine.gateway")


class Gateway:
    """See the module docs."""

    def __init__(self, config: GatewayConfig) -> None:
        self.config = config
        self.started = time.time_ns()
        self.upstreams = Upstreams(config.nodes, config.screener, config.upstream_timeout_secs)
        self.relay = Relay(self.upstreams)
        self.feeds = Feeds(self.upstreams.nodes, config.upstream_timeout_secs)
        Path(config.data_dir).mkdir(parents=True, exist_ok=True)
        self.store = Store(config.database_url)
        self.queue = QueueWatch(
            self.store, config.worker_stale_secs, config.worker_max_attempts, config.queue_watch_secs
        )
        #: The execution block every backtest of this gateway takes (its fee and fill models
        #: are the only ones).
        self.execution = ExecutionConfig(capital=config.backtest_capital, seed=config.backtest_seed)
        self.study_storage = open_storage(config.database_url, config.data_dir)
        self.scheduler = Scheduler(self.store, self.study_storage, config.gateway_id, self.execution)
        self._studies_moved: asyncio.Event | None = None

    def wake_studies(self) -> None:
        """A study was created or changed state: the scheduler looks now."""
        if self._studies_moved is not None:
            self._studies_moved.set()

    def known_instrument(self, iid: str) -> bool | None:
        """Whether a node lists ``iid`` or a configured catalog holds its bars (None when the
        node of its venue, or any node, cannot be asked now). Reads the disk: call it off the
        event loop."""
        if held_in(self.config.catalogs, iid):
            return True
        node = self.upstreams.node_of(iid.rsplit(".", 1)[-1])
        if node is not None:
            return iid in node.instruments
        return False if all(n.reachable for n in self.upstreams.nodes) else None

    async def run(self, stop: asyncio.Event, app: App) -> None:
        """Serve ``app`` (the gateway's, over this gateway) until ``stop`` is set."""
        server = embedded_server(app, host=self.config.host, port=self.config.port, backlog=self.config.http_backlog)
        http_task = asyncio.create_task(server.serve())
        watches = [
            asyncio.create_task(self._watch(stop)),
            asyncio.create_task(self.queue.run(stop)),
            asyncio.create_task(self._schedule(stop)),
        ]
        self.feeds.start()
        try:
            await stop.wait()
        finally:
            for watch in watches:
                watch.cancel()
            await asyncio.gather(*watches, return_exceptions=True)
            await self.feeds.aclose()
            await self.upstreams.aclose()
            server.stop()
            await asyncio.wait({http_task}, timeout=30)
            self.store.close()

    async def _schedule(self, stop: asyncio.Event) -> None:
        """The study scheduler's turns, every ``study_poll_secs`` or at once when woken."""
        moved = self._studies_moved = asyncio.Event()
        while not stop.is_set():
            claim = moved.is_set()
            moved.clear()
            try:
                await asyncio.to_thread(self.scheduler.turn, claim)
            except Exception:
                log.exception("the study scheduler's turn failed; it runs again")
            try:
                await asyncio.wait_for(moved.wait(), self.config.study_poll_secs)
            except TimeoutError:
                pass

    async def _watch(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            await self.upstreams.refresh()
            try:
                await asyncio.wait_for(stop.wait(), self.config.refresh_secs)
            except TimeoutError:
                pass
