"""The SSE rivals, each with one bounded ``asyncio.Queue`` per subscriber fed by a publisher in
the same process (the same events as Spine's), and the same two bench routes:

- ``sse_starlette_app``: sse-starlette's ``EventSourceResponse`` (served on uvicorn);
- ``plain_app``: a plain Starlette ``StreamingResponse`` (served on embedded Granian, ASGI).

Events are yielded pre-encoded (bytes pass through sse-starlette untouched), so every server
sends identical bytes and encodes each event once.

    python -m benches.http.sse_rivals PORT     # plain_app on embedded Granian
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator

from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from benches.http import embedded
from benches.http.events import QueueHub, control_answer, publish

HUB = QueueHub()
SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}


async def _events(queue: asyncio.Queue[bytes]) -> AsyncIterator[bytes]:
    try:
        while True:
            yield await queue.get()
    finally:
        HUB.unsubscribe(queue)


async def sse_starlette_stream(request: Request) -> EventSourceResponse:
    return EventSourceResponse(_events(HUB.subscribe()), headers=SSE_HEADERS)


async def plain_stream(request: Request) -> StreamingResponse:
    return StreamingResponse(_events(HUB.subscribe()), media_type="text/event-stream", headers=SSE_HEADERS)


async def subscribers(request: Request) -> Response:
    return Response(b'{"subscribers":%d}' % len(HUB), media_type="application/json")


async def publish_route(request: Request) -> Response:
    query = {k: float(v) for k, v in request.query_params.items()}
    started = time.monotonic()
    published = await publish(
        HUB.publish, query.get("rate", 0.0), query.get("seconds", 1.0), int(query.get("burst", 1))
    )
    return Response(control_answer(published, started), media_type="application/json")


def _app(stream: object) -> Starlette:
    return Starlette(
        routes=[
            Route("/v2/stream/bars", stream),
            Route("/bench/subscribers", subscribers),
            Route("/bench/publish", publish_route),
        ]
    )


sse_starlette_app = _app(sse_starlette_stream)
plain_app = _app(plain_stream)

if __name__ == "__main__":
    embedded.serve(plain_app, "asgi", int(sys.argv[1]))
