"""The web server's lifecycle: its proxy's connections to the gateway and the app served on
Granian in one event loop (:mod:`spine.web.api`, given by :mod:`spine.web.main`)."""

from __future__ import annotations

import asyncio
from typing import Any

from spine.http.serve import embedded_server
from spine.web.config import WebConfig
from spine.web.proxy import Proxy

__all__ = ["Web"]


class Web:
    def __init__(self, config: WebConfig) -> None:
        self.config = config
        self.proxy = Proxy(config.gateway, config.mode, config.upstream_timeout_secs)

    async def run(self, stop: asyncio.Event, app: Any) -> None:
        """Serve ``app`` until ``stop`` is set."""
        server = embedded_server(app, host=self.config.host, port=self.config.port, backlog=self.config.http_backlog)
        serving = asyncio.create_task(server.serve())
        try:
            await stop.wait()
        finally:
            server.stop()
            await asyncio.wait({serving}, timeout=30)
            await self.proxy.aclose()
