"""The failure of a request one process makes of another (the screener of its nodes, the
gateway of its nodes and screener), and how it is said in public: the upstream by name
(``node-1``..), the cause in plain words; its address and the client's exception go to the log."""

from __future__ import annotations

import aiohttp
import httpx

__all__ = ["UpstreamError", "plain_cause"]


class UpstreamError(RuntimeError):
    """A request to an upstream process that failed: the upstream, what was asked, and why."""

    def __init__(self, node: str, request: str, cause: str) -> None:
        super().__init__(f"UPSTREAM_UNAVAILABLE: {node}: {request}: {cause}")
        self.node, self.request, self.cause = node, request, cause


def plain_cause(error: BaseException) -> str:
    """Why a request to an upstream failed, said without its address or the client's
    exception (aiohttp's for requests, httpx's for streams)."""
    if isinstance(error, httpx.HTTPStatusError):
        return f"HTTP {error.response.status_code}"
    if isinstance(error, (TimeoutError, aiohttp.ServerTimeoutError, httpx.TimeoutException)):
        return "no answer within the timeout"
    if isinstance(error, (aiohttp.ClientConnectorError, httpx.ConnectError)):
        return "connection refused or unreachable"
    if isinstance(
        error, (aiohttp.ServerDisconnectedError, aiohttp.ClientPayloadError, httpx.RemoteProtocolError, httpx.ReadError)
    ):
        return "the connection broke before the answer ended"
    return "the request failed (this process's log has its error)"
