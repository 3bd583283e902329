"""The node's RSGI application (served by Granian): routing by the route table through
``http_router``, msgspec encoding, one error envelope, and SSE streams fed by the fan-out hub.

A stream subscribes with its keep-predicate (instrument, kind) applied at enqueue, writes
whatever its subscriber has pending in one send, and sends a ``heartbeat`` event after
``heartbeat_secs`` without one. A slow client only loses its own oldest events.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import msgspec
from http_router import InvalidMethodError, NotFoundError, Router

from spine._core import WIRE_VERSION
from spine.http.errors import HttpError, error_response
from spine.http.market import MarketHandlers
from spine.http.openapi import openapi_document
from spine.http.request import Query
from spine.http.routes import OPERATIONS, Operation

__all__ = ["NodeApp", "build_app"]

log = logging.getLogger("spine.http")
JSON = [("content-type", "application/json")]
SSE = [("content-type", "text/event-stream"), ("cache-control", "no-cache"), ("x-accel-buffering", "no")]
_encode = msgspec.json.Encoder().encode


class NodeApp:
    """``__rsgi__`` entry point over one venue node."""

    def __init__(self, node: Any, *, heartbeat_secs: float = 15.0) -> None:
        self.node = node
        self.handlers = MarketHandlers(node)
        self.heartbeat_secs = heartbeat_secs
        self.router = Router(trim_last_slash=False)
        for op in OPERATIONS:
            self.router.route(op.path, methods=[op.method])(op)
        self.openapi = _encode(openapi_document(OPERATIONS))

    async def __rsgi__(self, scope: Any, proto: Any) -> None:
        if scope.proto != "http":
            return
        try:
            match = self.router(scope.path, scope.method)
        except InvalidMethodError:
            allowed = sorted({op.method for op in OPERATIONS if _same_shape(op.path, scope.path)})
            return self._error(proto, HttpError("METHOD_NOT_ALLOWED",
                                                f"{scope.method} {scope.path}; allowed: {', '.join(allowed)}"))
        except NotFoundError:
            return self._error(proto, HttpError("NOT_FOUND", f"no route {scope.path}; see /v2/registry"))
        op: Operation = match.target
        try:
            if op.serving == "deferred":
                raise HttpError("CAPABILITY_DEFERRED", f"{op.id} is deferred on this node (a market-data node "
                                                       "registers no execution client); not yet")
            if op.serving == "elsewhere":
                raise HttpError("NOT_SUPPORTED_ON_THIS_NODE", f"{op.id} is not served by a venue node; "
                                                              "the gateway or screener serves it")
            query = Query(scope.query_string, op.params)
            if op.effect == "STREAM":
                return await self._stream(op, query, proto)
            if op.id == "spine.openapi.get":
                proto.response_bytes(200, JSON, self.openapi)
                return
            if op.id == "spine.schemas.get":
                proto.response_bytes(200, JSON, _schema_file((match.params or {})["file"]))
                return
            document = getattr(self.handlers, op.handler)(query, match.params or {})
            body = document if isinstance(document, bytes) else _encode(document)
            proto.response_bytes(200, JSON, body)
        except HttpError as error:
            self._error(proto, error)
        except Exception:  # noqa: BLE001 - logged; the client gets the envelope, never internals
            log.exception("%s %s failed", scope.method, scope.path)
            self._error(proto, HttpError("INTERNAL", "the request failed inside the node; it is logged"))

    def _error(self, proto: Any, error: HttpError) -> None:
        status, body = error_response(error)
        proto.response_bytes(status, JSON, _encode(body))

    # --- streams --------------------------------------------------------------------------------

    async def _stream(self, op: Operation, query: Query, proto: Any) -> None:
        iid = query.instrument_id()
        kind = {"spine.stream.bars": "bar", "spine.stream.quotes": "quote", "spine.stream.trades": "trade"}[op.id]
        if iid is not None and iid not in self.node.book:
            raise HttpError("NOT_FOUND", f"{iid} is not ingested on this node")
        subscription = self.node.hub.subscribe(instruments=None if iid is None else [iid], kinds=[kind])
        transport = proto.response_stream(200, SSE)
        disconnected = asyncio.ensure_future(proto.client_disconnect())
        try:
            while not disconnected.done():
                pending = asyncio.ensure_future(subscription.next(timeout=self.heartbeat_secs))
                await asyncio.wait({pending, disconnected}, return_when=asyncio.FIRST_COMPLETED)
                if not pending.done():
                    pending.cancel()
                    break
                await transport.send_bytes(pending.result() or _heartbeat())
        except Exception:  # noqa: BLE001 - the client went away mid-send
            pass
        finally:
            disconnected.cancel()
            subscription.close()


def _schema_file(name: str) -> bytes:
    """A schema file's bytes as shipped (the digest covers exactly these bytes)."""
    from spine.schemas import SCHEMA_DIR

    path = SCHEMA_DIR / name
    if "/" in name or not name.endswith(".json") or not path.is_file():
        raise HttpError("NOT_FOUND", f"no schema file {name!r}; see /v2/schemas")
    return path.read_bytes()


def _heartbeat() -> bytes:
    return b"event: heartbeat\ndata: " + _encode({"version": WIRE_VERSION, "ts_event": str(time.time_ns())}) + b"\n\n"


def _same_shape(template: str, path: str) -> bool:
    a, b = template.strip("/").split("/"), path.strip("/").split("/")
    return len(a) == len(b) and all(x == y or x.startswith("{") for x, y in zip(a, b, strict=True))


def build_app(node: Any, **options: Any) -> NodeApp:
    """The app over ``node`` (tests drive it in-process; ``spine node`` serves it)."""
    return NodeApp(node, **options)
