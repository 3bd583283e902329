"""The gateway process's state and lifecycle: its upstreams (looked at every
``refresh_secs``), the relay, the market streams' feeds (:mod:`spine.gateway.streams`), the job
store and the watch over its queue and workers (:mod:`spine.gateway.queue_watch`), all in one
event loop with the app it serves (:mod:`spine.gateway.api`, given by :mod:`spine.gateway.main`)."""

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
from spine.jobs.store import Store

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
        watches = [asyncio.create_task(self._watch(stop)), asyncio.create_task(self.queue.run(stop))]
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

    async def _watch(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            await self.upstreams.refresh()
            try:
                await asyncio.wait_for(stop.wait(), self.config.refresh_secs)
            except TimeoutError:
                pass
