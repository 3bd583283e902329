"""An aiohttp app served on a free loopback port for the duration of a block: the fake
upstreams (nodes, a screener) the gateway's unit tests talk to over real HTTP, and the base
those fakes share."""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from aiohttp import web


@asynccontextmanager
async def serving(app: web.Application) -> AsyncIterator[str]:
    """``app`` on ``127.0.0.1:<free port>``; yields its base URL and stops it at the end."""
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


class FakeUpstream:
    """An upstream that counts the paths it is asked, registers no operations and lists
    ``instruments``; a subclass answers its other paths in :meth:`more` (404 here)."""

    def __init__(self, instruments: list[dict[str, Any]]) -> None:
        self.asked: Counter[str] = Counter()
        self.instruments = instruments
        self.app = web.Application()
        self.app.router.add_route("*", "/{path:.*}", self.answer)

    async def answer(self, request: web.Request) -> web.Response:
        self.asked[request.path] += 1
        if request.path == "/v2/registry":
            return web.json_response({"operations": []})
        if request.path == "/v2/instruments":
            return web.json_response({"items": self.instruments, "next_cursor": None})
        return await self.more(request)

    async def more(self, request: web.Request) -> web.Response:
        return web.json_response({}, status=404)
