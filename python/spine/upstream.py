"""The failure of a request one process makes of another (the screener of its nodes, the
gateway of its nodes and screener)."""

from __future__ import annotations

__all__ = ["UpstreamError"]


class UpstreamError(RuntimeError):
    """A request to an upstream process that failed: the upstream, what was asked, and why."""

    def __init__(self, node: str, request: str, cause: str) -> None:
        super().__init__(f"UPSTREAM_UNAVAILABLE: {node}: {request}: {cause}")
        self.node, self.request, self.cause = node, request, cause
