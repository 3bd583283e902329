"""What each door adds to one read, side by side in one run, against a stand-in gateway on
loopback that answers ``GET /v2/instruments`` with a committed page (so the figures are the
doors' own, not a gateway's):

- ``httpx``: a bare ``httpx.Client.get`` and ``json.loads`` (what a script does, checking nothing);
- ``spine.client``: ``Client.instruments_list()``: the argument checks, the request, the
  client-side decode (all six steps);
- ``spine tools``: the same read as a tool call through the ``mcp`` SDK's stdio client to a
  ``spine tools`` process (JSON-RPC over pipes, then the HTTP request).

Run: ``pytest benches/bench_tools.py --benchmark-group-by=group``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client as McpClient
from mcp import StdioServerParameters
from pytest_benchmark.fixture import BenchmarkFixture

from spine.client import Client

PAGE = (
    Path(__file__).resolve().parents[1] / "tests" / "data" / "wire_examples" / "svc.instrument_page.json"
).read_bytes()


class Page(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as a gateway answers
    disable_nagle_algorithm = True  # headers and body leave at once, as a gateway sends them

    def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def gateway() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.benchmark(group="one read of a page")
def test_httpx(benchmark: BenchmarkFixture, gateway: str) -> None:
    with httpx.Client(base_url=gateway) as http:
        page = benchmark(lambda: json.loads(http.get("/v2/instruments").content))
    assert page == json.loads(PAGE)


@pytest.mark.benchmark(group="one read of a page")
def test_spine_client(benchmark: BenchmarkFixture, gateway: str) -> None:
    with Client(gateway) as spine:
        page = benchmark(spine.instruments_list)
    assert page == json.loads(PAGE)


@pytest.mark.benchmark(group="one read of a page")
@pytest.mark.parametrize("tool", ["instruments_list", "no_such_tool"], ids=["read", "protocol-floor"])
def test_spine_tools(benchmark: BenchmarkFixture, gateway: str, tool: str) -> None:
    """The tool server started once; each round is one ``tools/call`` on the open session,
    timed from a portal into the SDK client's event loop. An unknown tool's call makes no
    request: the protocol's own floor (JSON-RPC over the pipes, both sides' validation)."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "spine.cli", "tools", "--gateway", gateway], env=dict(os.environ)
    )

    async def session(portal_ready: Any) -> None:
        async with McpClient(params) as tools:
            await portal_ready(tools)

    with anyio.from_thread.start_blocking_portal() as portal:
        opened: dict[str, Any] = {}
        done = threading.Event()

        async def keep(tools: McpClient) -> None:
            opened["tools"] = tools
            await anyio.to_thread.run_sync(done.wait)

        future = portal.start_task_soon(session, keep)
        try:
            portal.call(lambda: anyio.sleep(0))
            while "tools" not in opened:
                portal.call(anyio.sleep, 0.05)
            result = benchmark(lambda: portal.call(opened["tools"].call_tool, tool, {}))
        finally:
            done.set()
            future.result(timeout=60)
    if tool == "no_such_tool":
        assert result.is_error
    else:
        assert json.loads(result.content[0].text) == json.loads(PAGE)
