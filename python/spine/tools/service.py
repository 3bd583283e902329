"""A tool call against the gateway, as the protocol returns it: the gateway's document as the
text it came as (an error answer, a 403 included, is a tool error carrying the envelope), a
stream's bounded batch as one text per event, and a refused argument or an unreachable gateway
as a tool error saying so. Nothing here knows the protocol's transport."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import anyio.to_thread
import mcp_types as types

from spine.client.errors import ArgumentError, GatewayUnreachable
from spine.client.table import Tool, tool
from spine.client.transport import Answer, Gateway
from spine.tools.config import ToolsConfig

__all__ = ["ToolService"]

log = logging.getLogger("spine.tools")


def _text(*texts: str, error: bool = False, meta: dict[str, Any] | None = None) -> types.CallToolResult:
    content: list[types.ContentBlock] = [types.TextContent(type="text", text=text) for text in texts]
    return types.CallToolResult(content=content, is_error=error, _meta=meta)


class ToolService:
    def __init__(self, config: ToolsConfig) -> None:
        self.gateway = Gateway(config.gateway, config.timeout_secs)

    def close(self) -> None:
        self.gateway.close()

    async def call(self, name: str, arguments: Mapping[str, Any] | None) -> types.CallToolResult:
        try:
            found = tool(name)
        except KeyError:
            return _text(f"unknown tool {name!r}; tools/list names every tool", error=True)
        try:
            return await self._call(found, dict(arguments or {}))
        except ArgumentError as error:
            return _text(str(error), error=True)
        except GatewayUnreachable as error:
            log.warning("%s: %s", name, error)  # the address goes to the log, not to the caller
            return _text(f"{name}: the gateway did not answer; is it running?", error=True)

    async def _call(self, found: Tool, arguments: dict[str, Any]) -> types.CallToolResult:
        if not found.stream:
            answer = await anyio.to_thread.run_sync(self.gateway.call, found, arguments)
            return _answer(answer)
        got = await self.gateway.abatch(found, arguments)
        if isinstance(got, Answer):
            return _answer(got)
        meta = {"spine/ended": got.ended, "spine/events": [e.event for e in got.events]}
        return _text(*(e.data for e in got.events), meta=meta)


def _answer(answer: Answer) -> types.CallToolResult:
    return _text(
        answer.body.decode("utf-8", errors="replace"), error=not answer.ok, meta={"spine/status": answer.status}
    )
