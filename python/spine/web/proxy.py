"""The same-origin proxy: ``/api/engine/<path>`` is the gateway's ``/<path>``, the browser's
only way to the backend.

- A mutating request is refused here, 403 ``MUTATION_REFUSED`` in the error envelope, unless
  this host's deployment mode (its configuration, never the request) is ``private-operator``.
  Mutating is the route table's COMMAND effect, whatever the verb (``GET
  /v2/studies/{id}/cancel`` is one); a verb other than GET or HEAD on a path the table does not
  hold is refused too (the proxy never guesses a write harmless).
- Anything else is forwarded as it came (method, path, query, body, content type, accept,
  ``Last-Event-ID``), and the gateway's status, content type and body come back unchanged. A
  stream (the table's STREAM effect) is piped through frame by frame, never buffered whole.
- No fixtures and no fallbacks: a gateway that cannot be reached or does not answer in time is
  502 ``UPSTREAM_UNAVAILABLE`` (its address goes to the log); the page then shows the backend
  unavailable.
"""

from __future__ import annotations

import logging
from typing import Any

import httpx
from http_router import InvalidMethodError, NotFoundError, Router

from spine.http.app import operation_router
from spine.http.errors import HttpError
from spine.http.routes import Operation
from spine.upstream_errors import plain_cause

__all__ = ["PREFIX", "Forwarded", "Proxy"]

log = logging.getLogger("spine.web")

PREFIX = "/api/engine"
#: Request headers passed on; every other (cookies included) stays with the browser.
_REQUEST_HEADERS = ("accept", "content-type", "last-event-id")
#: Response headers passed back beside the body.
_RESPONSE_HEADERS = ("content-type", "retry-after", "allow")


class Forwarded:
    """The gateway's answer: its status, the headers passed back, its body."""

    def __init__(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body


class Proxy:
    """Forwards to ``gateway`` (a base URL) for a host in ``mode``."""

    def __init__(self, gateway: str, mode: str, timeout_secs: float) -> None:
        self.gateway = gateway.rstrip("/")
        self.mode = mode
        self.client = httpx.AsyncClient(timeout=httpx.Timeout(timeout_secs), follow_redirects=False)
        #: Streams wait on the gateway's frames and heartbeats as long as they last.
        self.streams = httpx.AsyncClient(timeout=httpx.Timeout(timeout_secs, read=None), follow_redirects=False)
        self._router: Router = operation_router()

    def operation(self, method: str, path: str) -> Operation | None:
        """The route table's operation at ``method`` and ``path`` (None: the table has none)."""
        try:
            op: Operation = self._router(path, "GET" if method == "HEAD" else method).target
        except (NotFoundError, InvalidMethodError):
            return None
        return op

    def check(self, method: str, path: str) -> Operation | None:
        """The operation, once this host may send it on.

        # Errors
        :class:`HttpError` ``MUTATION_REFUSED`` for a mutation on a host that is not
        ``private-operator``."""
        op = self.operation(method, path)
        if self.mode == "private-operator":
            return op
        if op is not None and op.effect == "COMMAND":
            raise HttpError(
                "MUTATION_REFUSED",
                f"{method} {path} ({op.id}) changes state; this host is {self.mode} (set server-side: "
                "SPINE_DEPLOYMENT_MODE=private-operator)",
            )
        if op is None and method not in ("GET", "HEAD"):
            raise HttpError(
                "MUTATION_REFUSED",
                f"{method} {path} is no route of the table; on a {self.mode} host only GET and HEAD pass",
            )
        return op

    async def forward(self, method: str, path: str, query: str, headers: Any, body: bytes) -> Forwarded:
        """One request to the gateway and its answer, unchanged.

        # Errors
        :class:`HttpError` ``UPSTREAM_UNAVAILABLE``."""
        url = self.gateway + path + (f"?{query}" if query else "")
        sent = {name: value for name in _REQUEST_HEADERS if (value := headers.get(name)) is not None}
        try:
            response = await self.client.request(method, url, headers=sent, content=body or None)
        except httpx.TimeoutException as error:
            log.warning("the gateway (%s): %s %s: %s", self.gateway, method, path, error)
            raise HttpError("UPSTREAM_UNAVAILABLE", f"the gateway: {method} {path}: no answer in time") from None
        except httpx.HTTPError as error:
            log.warning("the gateway (%s): %s %s: %s: %s", self.gateway, method, path, type(error).__name__, error)
            raise HttpError("UPSTREAM_UNAVAILABLE", f"the gateway: {method} {path}: {plain_cause(error)}") from None
        passed = [(name, value) for name in _RESPONSE_HEADERS if (value := response.headers.get(name)) is not None]
        return Forwarded(response.status_code, passed, response.content)

    async def aclose(self) -> None:
        await self.client.aclose()
        await self.streams.aclose()
