"""The protocol's side: a low-level ``mcp`` server whose tools are the tool table (their input
schemas are generated, so the SDK's decorator API, which derives schemas from signatures, does
not fit) and whose calls go to :class:`~spine.tools.service.ToolService`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import mcp_types as types
from mcp.server.lowlevel.server import Server

from spine import __version__
from spine.client.table import tools

__all__ = ["INSTRUCTIONS", "Tools", "build_server", "listed"]


class Tools(Protocol):
    """What the handlers need of the service: a tool's call, as the protocol returns it."""

    async def call(self, name: str, arguments: Mapping[str, Any] | None) -> types.CallToolResult: ...


INSTRUCTIONS = (
    "Spine's gateway as tools: instruments, bars, venue facts, the screener, strategies, backtests and "
    "parameter studies. Each tool answers the gateway's JSON document unchanged; decimals and timestamps "
    "are strings. Commands need a private-operator host (else 403). Stream tools return a bounded batch."
)


def listed() -> list[types.Tool]:
    """The tool table as the protocol lists it."""
    return [
        types.Tool(
            name=t.name,
            description=t.description,
            input_schema=t.input_schema,
            annotations=types.ToolAnnotations(
                read_only_hint=t.effect != "COMMAND", destructive_hint=False, open_world_hint=False
            ),
        )
        for t in tools()
    ]


def build_server(service: Tools) -> Server[Any]:
    tools = listed()

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return await service.call(params.name, params.arguments)

    return Server(
        "spine",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
