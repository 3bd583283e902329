"""The gateway's upstreams against fake upstreams on loopback (aiohttp servers on port 0): a
request naming an unknown instrument re-reads the upstreams at most once per
:data:`~spine.gateway.upstream_table.MISS_REFRESH_SECS`, concurrent misses sharing one read; and a
relayed refusal keeps its status, body and Retry-After."""

from __future__ import annotations

import asyncio
import json
from collections import Counter

import loopback_app
import pytest
from aiohttp import web
from loopback_app import serving

from spine.gateway.relay import Relay
from spine.gateway.upstream_table import MISS_REFRESH_SECS, Upstreams, passed_headers
from spine.http.errors import HttpError
from spine.http.request import Query
from spine.http.routes import OPERATIONS

BUSY = {"version": "spine.v2", "error": {"code": 50303, "detail": "SCREENS_BUSY: 1 running and 4 waiting"}}


class FakeUpstream(loopback_app.FakeUpstream):
    """A node serving one SIM instrument, or a screener that is busy; counts what it is asked."""

    def __init__(self) -> None:
        super().__init__([{"instrument_id": "BTCUSDT.SIM"}])

    async def more(self, request: web.Request) -> web.Response:
        if request.path == "/v2/screener/screen":
            return web.Response(
                status=503,
                body=json.dumps(BUSY).encode(),
                content_type="application/json",
                headers={"Retry-After": "7", "X-Internal": "not passed on"},
            )
        return await super().more(request)


def test_concurrent_misses_share_one_refresh_and_a_second_waits_its_interval() -> None:
    async def scenario() -> Counter[str]:
        fake = FakeUpstream()
        async with serving(fake.app) as url:
            upstreams = Upstreams([url], None, 5.0)
            relay = Relay(upstreams)
            try:
                misses = await asyncio.gather(
                    *(relay.node_of(f"X{k}.NOWHERE") for k in range(50)), return_exceptions=True
                )
                assert all(isinstance(m, HttpError) and m.symbol == "NOT_FOUND" for m in misses), misses
                held = await asyncio.gather(
                    *(relay.node_of(f"NEW{k}.SIM", held=True) for k in range(20)), return_exceptions=True
                )
                assert all(isinstance(m, HttpError) for m in held), held
                assert fake.asked == {"/v2/registry": 1, "/v2/instruments": 1}, fake.asked
                node = upstreams.nodes[0]
                assert node.looked_at is not None
                node.looked_at -= MISS_REFRESH_SECS  # as if the interval had passed
                assert await relay.node_of("BTCUSDT.SIM", held=True) is node
                with pytest.raises(HttpError):
                    await relay.node_of("X.NOWHERE")
            finally:
                await upstreams.aclose()
            return fake.asked

    asked = asyncio.run(scenario())
    assert asked == {"/v2/registry": 2, "/v2/instruments": 2}, asked


def test_the_periodic_refresh_still_reads_every_time() -> None:
    async def scenario() -> Counter[str]:
        fake = FakeUpstream()
        async with serving(fake.app) as url:
            upstreams = Upstreams([url], None, 5.0)
            try:
                for _ in range(3):
                    await upstreams.refresh()
            finally:
                await upstreams.aclose()
            return fake.asked

    assert asyncio.run(scenario())["/v2/registry"] == 3


def test_a_relayed_503_keeps_its_status_body_and_retry_after() -> None:
    screen = next(op for op in OPERATIONS if op.id == "spine.screener.screen")

    async def scenario() -> tuple[int, bytes, tuple[tuple[str, str], ...]]:
        fake = FakeUpstream()
        async with serving(fake.app) as url:
            upstreams = Upstreams([], url, 5.0)
            try:
                relayed = await Relay(upstreams).screener(screen, Query("", screen.params), {}, b"{}")
            finally:
                await upstreams.aclose()
        return relayed.status, relayed.body, relayed.headers

    status, body, headers = asyncio.run(scenario())
    assert (status, json.loads(body)) == (503, BUSY)
    assert headers == (("retry-after", "7"),)


@pytest.mark.parametrize("value", ["7", "Fri, 04 Dec 2026 16:00:00 GMT"])
def test_only_retry_after_is_passed_on(value: str) -> None:
    assert passed_headers({"Retry-After": value, "Set-Cookie": "x", "Server": "granian"}) == (("retry-after", value),)
