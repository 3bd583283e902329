"""The RSGI application every process's app is (served by Granian). :class:`App` routes by the
route table through ``http_router`` (an operation another process serves is refused, never
missing), and does msgspec encoding, one error envelope, the deployment-mode gate, POST bodies,
OpenAPI, the schema files and the v1 fixtures. A process's app (the node's
:mod:`spine.node.api`, the screener's, the gateway's) adds its handlers, its streams and the
health probe's cached document.

Handlers are synchronous: the app reads a POST body here (at most ``MAX_BODY_BYTES``, whole
within ``body_secs``), decodes it into the operation's sealed Struct and passes it on. A served COMMAND is refused (403
MUTATION_REFUSED) before its body is read unless the node's deployment mode, read from its
configuration only, is private-operator.

A stream is named in the route table (:attr:`~spine.http.routes.Operation.stream`) and served
by the process's app; :mod:`spine.http.streams` writes it.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable
from typing import Any, NamedTuple

import msgspec
from http_router import InvalidMethodError, NotFoundError, Router

from spine.http.bodies import MAX_BODY_BYTES, DocumentBody, decode_body, decode_document
from spine.http.errors import HttpError, error_response
from spine.http.fixtures import fixture_bytes
from spine.http.openapi import OpenApiHandlers
from spine.http.request import Query, memoizable
from spine.http.routes import OPERATIONS, Operation, Process, serving
from spine.http.streams import SSE
from spine.http.v1 import V1_VERSION

__all__ = ["App", "MAX_URI_BYTES", "Relayed", "operation_router", "read_body"]

log = logging.getLogger("spine.http")
JSON = [("content-type", "application/json")]
_encode = msgspec.json.Encoder().encode
#: Parsed queries kept (cleared when full).
QUERY_MEMO = 1_024
#: The longest path plus query string the app reads (414 URI_TOO_LONG beyond, in the envelope);
#: Granian's own limit, far above, answers without a body.
MAX_URI_BYTES = 8_192


class Relayed(NamedTuple):
    """An answer sent as it is: its status and its JSON body's bytes (an upstream's, passed on
    as it came, or a handler's own answer other than 200: a 201, 202 or a 409 document)."""

    status: int
    body: bytes
    #: Headers sent with it (an upstream's Retry-After).
    headers: tuple[tuple[str, str], ...] = ()


class App:
    """``__rsgi__`` over the route table for one process: ``v2`` and ``v1`` are the objects
    whose methods (named by :attr:`Operation.handler`) answer the operations ``process`` serves;
    the OpenAPI document's handler is added here. Streams and the health probe's fast path are
    the subclass's."""

    def __init__(
        self,
        process: Process,
        v2: tuple[Any, ...],
        v1: tuple[Any, ...],
        *,
        deployment_mode: str,
        body_secs: float = 10.0,
    ) -> None:
        self.process = process
        openapi = OpenApiHandlers(process)
        self.v2, self.v1 = (*v2, openapi), v1
        self.deployment_mode = deployment_mode
        self.body_secs = body_secs
        self.router = operation_router()
        # Paths without parameters resolve by one dictionary lookup before the router.
        self.static = {(op.method, op.path): op for op in OPERATIONS if "{" not in op.path}
        self._serving = {op.id: serving(op, process) for op in OPERATIONS}
        self._handlers: dict[str, Callable[..., Any]] = {}
        self._queries: dict[tuple[str, str], Query] = {}
        self.openapi = openapi.document

    def health_bytes(self) -> bytes | None:
        """The encoded ``/v2/health`` document when the process keeps one ready (the probe's
        fast path), else None (the route's handler answers)."""
        return None

    async def __rsgi__(self, scope: Any, proto: Any) -> None:
        if scope.proto != "http":
            return
        if len(scope.path) + len(scope.query_string) > MAX_URI_BYTES:
            return self._error(
                proto,
                HttpError(
                    "URI_TOO_LONG",
                    f"the path and query hold {len(scope.path)} + "
                    f"{len(scope.query_string)} characters; at most "
                    f"{MAX_URI_BYTES} together",
                ),
                _is_v1(scope.path),
            )
        method = scope.method
        if method == "HEAD":  # a GET's status and headers, without its body (RFC 9110 9.3.2)
            method, proto = "GET", _HeadOnly(proto)
        if scope.path == "/v2/health" and method == "GET" and not scope.query_string:
            # The probe path: one comparison and a cached document (see health_bytes).
            health = self.health_bytes()
            if health is not None:
                proto.response_bytes(200, JSON, health)
                return
        op: Operation | None = self.static.get((method, scope.path))
        if op is not None:
            return await self._serve(op, {}, scope, proto)
        try:
            match = self.router(scope.path, method)
        except InvalidMethodError:
            allowed = sorted({op.method for op in OPERATIONS if _same_shape(op.path, scope.path)})
            if "GET" in allowed:
                allowed.append("HEAD")
            return self._error(
                proto,
                HttpError("METHOD_NOT_ALLOWED", f"{scope.method} {scope.path}; allowed: {', '.join(allowed)}"),
                _is_v1(scope.path),
                [("allow", ", ".join(allowed))],
            )
        except NotFoundError:
            # No route of either generation: the governed (v2) envelope, whatever the prefix;
            # only the v1 routes themselves answer v1's.
            return self._error(proto, HttpError("NOT_FOUND", f"no route {scope.path}; see /v2/registry"))
        await self._serve(match.target, dict(match.params or {}), scope, proto)

    async def _serve(self, op: Operation, params: dict[str, str], scope: Any, proto: Any) -> None:
        v1 = op.wire_version == "v1"
        try:
            # The mode comes first: in public-readonly every COMMAND is 403, served here or not.
            if op.effect == "COMMAND" and self.deployment_mode != "private-operator":
                raise HttpError(
                    "MUTATION_REFUSED",
                    f"{op.method} {op.path} changes the node; this host's deployment "
                    f"mode is {self.deployment_mode} (set server-side only, by "
                    "deployment_mode or SPINE_DEPLOYMENT_MODE), and only "
                    "private-operator allows it",
                )
            how = self._serving[op.id]
            if how == "deferred":
                raise HttpError(
                    "CAPABILITY_DEFERRED",
                    f"{op.id} is deferred on this node (a market-data node registers no execution client; "
                    "a paper node, a venue node with a sandbox section, serves it)",
                )
            if how == "elsewhere":
                raise HttpError(
                    "NOT_SUPPORTED_ON_THIS_NODE", f"{op.id} is not served by a {_NAMES[self.process]}; {_served_by(op)}"
                )
            query = self._query(op, scope.query_string)
            if op.effect == "STREAM" and isinstance(proto, _HeadOnly):
                proto.response_empty(200, SSE)
                return
            if op.stream == "v1":
                return await self._v1_stream(query, scope, proto)
            if op.stream is not None:
                return await self._stream(op, query, scope, proto)
            if op.fixture is not None:
                proto.response_bytes(200, JSON, fixture_bytes(op.fixture))
                return
            handler = self._handler(op)
            if op.body is not None:
                document = handler(query, params, self._body(op, await read_body(proto, self.body_secs)))
            else:
                document = handler(query, params)
            if inspect.isawaitable(document):  # a handler that waits on an upstream
                document = await document
            if isinstance(document, Relayed):
                proto.response_bytes(document.status, JSON + list(document.headers), document.body)
                return
            body = document if isinstance(document, bytes) else _encode(document)
            proto.response_bytes(200, JSON, body)
        except HttpError as error:
            self._error(proto, error, v1, list(error.headers))
        except Exception:  # noqa: BLE001 - logged; the client gets the envelope, never internals
            log.exception("%s %s failed", scope.method, scope.path)
            failed = f"the request failed inside the {_NAMES[self.process]}; it is logged"
            self._error(proto, HttpError("INTERNAL", failed), v1)

    def _query(self, op: Operation, raw: str) -> Query:
        """The checked query; a repeated one (a client polling a page) is parsed once. Queries
        are read-only once parsed; a refused one raises and is never kept."""
        key = (op.id, raw)
        query = self._queries.get(key)
        if query is None:
            query = Query(raw, op.params)
            if not memoizable(raw):
                return query
            if len(self._queries) >= QUERY_MEMO:
                self._queries.clear()
            self._queries[key] = query
        return query

    @staticmethod
    def _body(op: Operation, raw: bytes) -> Any:
        route = f"{op.method} {op.path}"
        if isinstance(op.body, DocumentBody):
            return decode_document(route, raw, op.body)
        assert op.body is not None
        return decode_body(route, raw, op.body)

    def _handler(self, op: Operation) -> Callable[..., Any]:
        handler = self._handlers.get(op.id)
        if handler is None:
            owners = self.v1 if op.wire_version == "v1" else self.v2
            handler = self._handlers[op.id] = next(getattr(o, op.handler) for o in owners if hasattr(o, op.handler))
        return handler

    def _error(
        self, proto: Any, error: HttpError, v1: bool = False, headers: list[tuple[str, str]] | None = None
    ) -> None:
        status, body = error_response(error)
        if v1:  # the same envelope and code table under the v1 version string
            body["version"] = V1_VERSION
        proto.response_bytes(status, JSON + (headers or []), _encode(body))

    async def _stream(self, op: Operation, query: Query, scope: Any, proto: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__} serves no stream {op.id}")

    async def _v1_stream(self, query: Query, scope: Any, proto: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__} serves no v1 stream")


class _HeadOnly:
    """The protocol of a HEAD request: a GET's response goes out as its status and headers only
    (a stream's too: its headers, no subscription). A document goes to the transport whole:
    Granian (hyper) answers a HEAD with the GET's headers, ``content-length`` included (RFC 9110
    9.3.2), and sends no body; ``response_empty`` would announce no length at all."""

    def __init__(self, proto: Any) -> None:
        self._proto = proto

    def __getattr__(self, name: str) -> Any:
        return getattr(self._proto, name)


async def read_body(proto: Any, seconds: float) -> bytes:
    """The request body, refused once it passes ``MAX_BODY_BYTES`` or has not arrived whole
    within ``seconds`` (the rest is never read)."""
    chunks, size = [], 0
    try:
        async with asyncio.timeout(seconds):
            async for chunk in proto:
                size += len(chunk)
                if size > MAX_BODY_BYTES:
                    raise HttpError("INVALID_BODY", f"the body is larger than {MAX_BODY_BYTES} bytes")
                chunks.append(chunk)
    except TimeoutError:
        raise HttpError(
            "INVALID_BODY", f"the body did not arrive within {seconds} s of the request ({size} bytes came)"
        ) from None
    return b"".join(chunks)


#: How a refusal names the process that does not serve an operation.
_NAMES: dict[Process, str] = {"node": "venue node", "screener": "screener", "gateway": "gateway", "paper": "paper node"}


def _served_by(op: Operation) -> str:
    if op.served_by:
        return f"the gateway or the {' or '.join(_NAMES[p] for p in op.served_by)} serves it"
    return "the gateway serves it"


def _is_v1(path: str) -> bool:
    """Whether a routed path (a 405) is a v1 route's: anything outside the /v2 prefix."""
    return not (path.lower() == "/v2" or path.lower().startswith("/v2/"))


#: The path parameter that names a file: it may hold slashes (``src/signals/main.py``).
FILE_PATH = "{path}"


def operation_router() -> Router:
    """A router of every operation of the route table by method and path (its target the
    :class:`Operation`)."""
    router = Router(trim_last_slash=False)
    for op in OPERATIONS:
        router.route(_router_path(op.path), methods=[op.method])(op)
    return router


def _router_path(template: str) -> str:
    """The router's pattern of a route: a trailing file path takes the rest of the URL path
    (the registry and OpenAPI keep the spec's plain ``{path}``)."""
    return template.removesuffix(FILE_PATH) + "{path:path}" if template.endswith(FILE_PATH) else template


def _same_shape(template: str, path: str) -> bool:
    a, b = template.strip("/").split("/"), path.strip("/").split("/")
    if a[-1] == FILE_PATH and len(b) > len(a):  # the file path takes the remaining segments
        b = [*b[: len(a) - 1], "/".join(b[len(a) - 1 :])]
    return len(a) == len(b) and all(x == y or x.startswith("{") for x, y in zip(a, b, strict=True))
