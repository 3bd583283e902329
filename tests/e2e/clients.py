"""The three doors of the client tests, driven as a user drives them: the tool server through
the ``mcp`` SDK's own stdio client (it starts ``spine tools`` as a process), the commands as
``spine client`` processes, and the raw gateway bytes they must answer unchanged."""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
from mcp import Client, StdioServerParameters
from nodes import spine_cli

T = TypeVar("T")
#: A tool call through the whole stack; a backtest followed to its report takes longer.
CALL_SECS = 60.0
GATEWAY_TOKEN = "127.0.0.1"


def with_tools(gateway: str, session: Callable[[Client], Awaitable[T]]) -> T:
    """Run ``session`` against a ``spine tools --gateway`` process the SDK's client started."""
    # The SDK passes a child only a few variables unless told: this one's (PYTHONPATH) it needs.
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "spine.cli", "tools", "--gateway", gateway], env=dict(os.environ)
    )

    async def run() -> T:
        with anyio.fail_after(300):
            async with Client(params, read_timeout_seconds=CALL_SECS) as client:
                return await session(client)

    return anyio.run(run)


def text_of(result: Any) -> str:
    """The one text a query or command tool answers."""
    assert len(result.content) == 1, result
    return str(result.content[0].text)


def client(*args: str, gateway: str) -> tuple[int, str, str]:
    """``spine client ARGS --gateway URL`` run to its end: exit code, stdout, stderr."""
    done = spine_cli("client", *args, "--gateway", gateway, timeout=300)
    return done.returncode, done.stdout, done.stderr


def template_dir(root: Path, files: list[dict[str, str]]) -> Path:
    """A strategy template's files written under ``root``, as a user's project directory."""
    for file in files:
        path = root / file["path"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(file["content"], encoding="utf-8")
    return root


SCREEN = {
    "version": "spine.v2",
    "schema_id": "svc.screen_definition",
    "schema_version": 1,
    "resolutions": ["1m"],
    "instrument_ids": None,
    "filter": {"all": [{"key": "sma_20.value", "op": "IS_NOT_ABSENT"}]},
    "sort": [{"key": "rsi_14.value", "direction": "DESC"}],
    "limit": 5,
    "as_of": None,
}
