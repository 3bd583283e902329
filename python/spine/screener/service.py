"""The screener process's state and lifecycle: its rows, one feed per configured node, and the
app it serves on Granian (:mod:`spine.screener.api`, given by :mod:`spine.screener.main`), all in
one event loop. A feed that cannot warm (its node down) retries with backoff while the others
serve; the process state is STARTING until every feed has warmed once, then RUNNING, or
DEGRADED while any feed is down. The state is checkpointed every ``checkpoint_secs`` and at
shutdown (``spine.screener.checkpoint``); a start restores what the checkpoint holds."""

from __future__ import annotations

import asyncio
import logging
import random
from typing import Any, Literal

import httpx

from spine.http.app import App
from spine.http.serve import embedded_server
from spine.screener.admission import ScreenGate
from spine.screener.checkpoint import Checkpointer, checkpoint_path, read, registry_identity
from spine.screener.config import ScreenerConfig
from spine.screener.feed import NodeFeed
from spine.screener.node_client import NodeClient, UpstreamError
from spine.screener.observations import Observations, Observer
from spine.screener.rows import Rows
from spine.screener.stream import RowStream

__all__ = ["Screener"]

log = logging.getLogger("spine.screener")
ProcessState = Literal["STARTING", "RUNNING", "DEGRADED", "STOPPING"]


class Screener:
    """See the module docs."""

    def __init__(self, config: ScreenerConfig) -> None:
        self.config = config
        self.rows = Rows()
        self.stream = RowStream(self.rows, config.stream_subscribers)
        self.observations = Observations(config.observations_kept)
        Observer(self.rows, self.observations)
        self.client = httpx.AsyncClient(
            timeout=httpx.Timeout(config.upstream_timeout_secs),
            limits=httpx.Limits(max_connections=16 * len(config.nodes)),
        )
        backoff = (config.reconnect_min_secs, config.reconnect_max_secs)
        self.feeds = [
            NodeFeed(
                NodeClient(url, self.client, f"node-{n}"),
                self.rows,
                channel=config.channel,
                concurrency=config.warm_concurrency,
                backoff=backoff,
            )
            for n, url in enumerate(config.nodes, 1)
        ]
        self.warmed: set[int] = set()
        self.screens = ScreenGate(config.point_in_time_screens, config.point_in_time_queue)
        self.stopping = False
        self.checkpointer = Checkpointer(checkpoint_path(config.data_dir), registry_identity(self.rows.feature_ids))

    def process_state(self) -> ProcessState:
        if self.stopping:
            return "STOPPING"
        if len(self.warmed) < len(self.feeds):
            return "STARTING"
        return "RUNNING" if all(feed.state == "RUNNING" for feed in self.feeds) else "DEGRADED"

    def input_lag(self) -> int | None:
        """The newest close a node offered minus the newest folded; None before the first."""
        offered = [feed.offered for feed in self.feeds if feed.offered is not None]
        if not offered or self.rows.newest is None:
            return None
        return max(0, max(offered) - self.rows.newest)

    def connections(self) -> dict[str, Any]:
        """``svc.screener_health.connections``: totals over the nodes, then each node."""
        upstreams = [feed.accounting() for feed in self.feeds]
        totals = {k: sum(u[k] for u in upstreams) for k in ("open", "accepted", "closed", "refused")}
        return {**totals, "upstreams": upstreams}

    def last_error(self) -> str | None:
        errors = [feed.last_error for feed in self.feeds if feed.last_error is not None]
        return errors[-1] if errors else None

    def checkpoint_age(self) -> int | None:
        """Nanoseconds since the last checkpoint was written; None before the first."""
        return self.checkpointer.age()

    async def checkpoint(self) -> bool:
        """Write the checkpoint of every feed's instruments now (taken here, in one step; written
        on a thread); whether it was written."""
        return await self.checkpointer.save([held for feed in self.feeds for held in feed.held()])

    async def run(self, stop: asyncio.Event, app: App) -> None:
        """Serve ``app`` (the screener's, over this screener) and feed until ``stop`` is set."""
        server = embedded_server(app, host=self.config.host, port=self.config.port, backlog=self.config.http_backlog)
        http_task = asyncio.create_task(server.serve())
        saved = await asyncio.to_thread(read, self.checkpointer.path, self.checkpointer.registry)
        for feed in self.feeds:
            feed.saved = {held.instrument_id: held for held in saved if held.node == feed.node.base_url}
        feeds = [asyncio.create_task(self._feed(k, feed, stop)) for k, feed in enumerate(self.feeds)]
        checkpoints = asyncio.create_task(self._checkpoints(stop))
        try:
            await stop.wait()
        finally:
            # Feeds first (a stream waiting for its next close is cancelled, not awaited for a
            # minute), then the last checkpoint, then the upstream client, then the server, each
            # awaited to its end: a server thread left running at exit would outlive the
            # interpreter.
            self.stopping = True
            for task in (*feeds, checkpoints):
                task.cancel()
            await asyncio.gather(*feeds, checkpoints, return_exceptions=True)
            await self.checkpoint()
            await self.client.aclose()
            server.stop()
            await asyncio.wait({http_task}, timeout=30)

    async def _feed(self, k: int, feed: NodeFeed, stop: asyncio.Event) -> None:
        delay = self.config.reconnect_min_secs
        while not stop.is_set():
            try:
                await feed.warm()
                break
            except UpstreamError as error:
                feed.failed(str(error))
                log.warning("%s", error)
            try:
                await asyncio.wait_for(stop.wait(), delay * random.uniform(0.5, 1.5))
                return
            except TimeoutError:
                delay = min(delay * 2, self.config.reconnect_max_secs)
        self.warmed.add(k)
        # A process line (stdout, beside the start and stop lines): what the warm cost.
        print(
            f"spine screener {self.config.screener_id}: {feed.node.base_url}: warmed {len(feed.instruments)} "
            f"instruments, {feed.resumed} from the checkpoint; read {feed.warm_pages} bar pages, "
            f"{feed.warm_bars} bars",
            flush=True,
        )
        await feed.follow(stop)

    async def _checkpoints(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                await asyncio.wait_for(stop.wait(), self.config.checkpoint_secs)
                return
            except TimeoutError:
                await self.checkpoint()
