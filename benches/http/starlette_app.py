"""Rival 2, the strongest simple alternative: plain Starlette, each pre-built document encoded
by orjson per request, on uvicorn with uvloop and httptools."""

from __future__ import annotations

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from benches.http.pages import load, page_key

DOCUMENTS = load()


def _json(document: object) -> Response:
    return Response(orjson.dumps(document), media_type="application/json")


async def bars(request: Request) -> Response:
    key = page_key(request.query_params.get("instrument_id"), request.query_params.get("bar_type"))
    if key is None:
        return Response(b'{"detail":"not a pre-built page"}', 404, media_type="application/json")
    return _json(DOCUMENTS[key])


async def health(request: Request) -> Response:
    return _json(DOCUMENTS["health"])


app = Starlette(routes=[Route("/v2/bars", bars), Route("/v2/health", health)])
