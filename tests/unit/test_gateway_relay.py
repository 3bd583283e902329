"""The relay's path parameters reach the upstream as the client meant them: a decoded ``?``,
``#``, ``/`` or a ``..`` segment is re-encoded, never read by the upstream as a query, a
fragment or a path step. A loopback aiohttp server records the raw path it was asked."""

from __future__ import annotations

import asyncio

import pytest
from aiohttp import web

from spine.gateway.relay import Relay
from spine.gateway.upstream_table import Upstreams
from spine.http.routes import OPERATIONS

COVERAGE = next(op for op in OPERATIONS if op.id == "spine.coverage.get")


async def _asked(value: str) -> str:
    seen: list[str] = []

    async def record(request: web.Request) -> web.Response:
        seen.append(request.raw_path)
        return web.json_response({})

    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", record)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    upstreams = Upstreams([f"http://127.0.0.1:{port}"], None, 10)
    try:
        await Relay(upstreams)._relay(upstreams.nodes[0], COVERAGE, "", {"id": value}, None)
    finally:
        await upstreams.aclose()
        await runner.cleanup()
    return seen[0]


@pytest.mark.parametrize(
    ("value", "raw"),
    [
        ("BTCUSDT.SIM", "/v2/coverage/BTCUSDT.SIM"),
        ("a?b.SIM", "/v2/coverage/a%3Fb.SIM"),
        ("a#b.SIM", "/v2/coverage/a%23b.SIM"),
        ("../../x.SIM", "/v2/coverage/..%2F..%2Fx.SIM"),
        ("..", "/v2/coverage/%2E%2E"),
        (".", "/v2/coverage/%2E"),
    ],
)
def test_path_parameters_are_re_encoded(value: str, raw: str) -> None:
    assert asyncio.run(_asked(value)) == raw
