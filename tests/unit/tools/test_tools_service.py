"""``spine tools``: a bad configuration exits 2 naming the key; in process, over the protocol,
the server lists exactly the tool table and answers a call with the gateway's bytes unchanged
(an error answer as a tool error, the status in ``_meta``), a stream tool with a bounded batch
of events, and a refused argument, an unknown tool or an unreachable gateway as a tool error
that never shows the gateway's address. The gateway is a stdlib HTTP server on loopback."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar

import anyio
import mcp_types as types
import pytest
from mcp import Client

from spine.client import tools
from spine.tools.api import build_server
from spine.tools.config import ToolsConfig
from spine.tools.main import run_tools
from spine.tools.service import ToolService
from spine.wire.errors import error_body

T = TypeVar("T")
EXAMPLES = Path(__file__).resolve().parents[2] / "data" / "wire_examples"
#: The health example as the file holds it (indented, a trailing newline): served byte for byte.
HEALTH = (EXAMPLES / "svc.health.json").read_bytes()
REFUSED = json.dumps(error_body("MUTATION_REFUSED", "this host is not private-operator")).encode()
BARS = [json.dumps({"sequence": n, "ts_event": f"17000000{n}0000000000", "close": f"{n}.50"}) for n in (1, 2, 3)]


# --- a gateway on loopback -------------------------------------------------------------------


Route = Callable[["Handler"], None]


class Handler(BaseHTTPRequestHandler):
    server: FakeGateway

    def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
        self.server.asked.append(self.path)
        self.server.routes.get(self.path.split("?", 1)[0], not_found)(self)

    def answer(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the stdlib's name)
        pass


class FakeGateway(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, routes: dict[str, Route]) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.routes = routes
        self.asked: list[str] = []
        #: Set at the end: a stream handler holding its connection open lets go.
        self.release = threading.Event()


def not_found(handler: Handler) -> None:
    handler.answer(404, json.dumps(error_body("NOT_FOUND", handler.path)).encode())


@contextmanager
def serving(routes: dict[str, Route]) -> Iterator[FakeGateway]:
    """``routes`` (path -> handler) on ``127.0.0.1:<free port>`` in a thread, for the block."""
    server = FakeGateway(routes)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.release.set()
        server.shutdown()
        server.server_close()
        thread.join(5)


def url(server: FakeGateway) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


def sse(*frames: tuple[str, str], hold: bool = False) -> Route:
    """A stream answering ``frames`` (event, data), then closing, or, with ``hold``, keeping
    the connection open and silent until the server stops."""

    def route(handler: Handler) -> None:
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.send_header("cache-control", "no-cache")
        handler.end_headers()
        for event, data in frames:
            handler.wfile.write(f"event: {event}\ndata: {data}\n\n".encode())
        handler.wfile.flush()
        if hold:
            handler.server.release.wait(15)

    return route


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


# --- the protocol, in process ----------------------------------------------------------------


def session(gateway: str, work: Callable[[Client], Awaitable[T]]) -> T:
    """``work`` with a protocol client connected in process to the tool server over ``gateway``."""
    service = ToolService(ToolsConfig(gateway=gateway, timeout_secs=5.0))

    async def run() -> T:
        async with Client(build_server(service)) as client:
            return await work(client)

    try:
        return anyio.run(run)
    finally:
        service.close()


def call(gateway: str, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
    return session(gateway, lambda client: client.call_tool(name, arguments))


def texts(result: types.CallToolResult) -> list[str]:
    assert all(isinstance(c, types.TextContent) for c in result.content)
    return [c.text for c in result.content]  # type: ignore[union-attr]


# --- (a) the command's configuration ---------------------------------------------------------


@pytest.mark.parametrize(
    ("gateway", "environ", "key"),
    [
        ("ftp://x", {}, "gateway"),
        (None, {"SPINE_TOOLS_GATEWAY": "http://127.0.0.1:8800/v2"}, "gateway"),
        (None, {"SPINE_TOOLS_TIMEOUT_SECS": "0"}, "timeout_secs"),
        (None, {"SPINE_TOOLS_TIMEOUT_SECS": "3601"}, "timeout_secs"),
        (None, {"SPINE_TOOLS_TIMEOUT_SECS": "soon"}, "timeout_secs"),
    ],
    ids=["flag-scheme", "env-path", "timeout-zero", "timeout-past-an-hour", "timeout-not-a-number"],
)
def test_a_bad_setting_exits_2_naming_its_key(
    gateway: str | None, environ: dict[str, str], key: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before serving anything: exit 2, one message on stderr naming the key, stdout untouched."""
    assert run_tools(None, gateway, environ) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("spine tools: ")
    assert key in err


def test_a_bad_config_file_exits_2_naming_the_key_or_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "tools.toml"
    config.write_text("timeout_secs = 0\n", encoding="utf-8")
    assert run_tools(None, None, {"SPINE_TOOLS_CONFIG": str(config)}) == 2
    assert "timeout_secs" in capsys.readouterr().err
    assert run_tools(str(tmp_path / "missing.toml"), None, {}) == 2
    assert "missing.toml" in capsys.readouterr().err


def test_the_bounds_of_the_timeout_are_accepted() -> None:
    assert ToolsConfig(timeout_secs=3600).timeout_secs == 3600
    assert ToolsConfig(gateway="https://spine.example:8443/", timeout_secs=0.5).timeout_secs == 0.5


# --- (b) listing and tool errors -------------------------------------------------------------


def test_the_server_lists_exactly_the_tool_table_with_its_input_schemas() -> None:
    """Names in the table's order, each with the table's input schema and description; only
    commands are not marked read-only."""
    listed = session(f"http://127.0.0.1:{closed_port()}", lambda client: client.list_tools()).tools
    table = tools()
    assert [t.name for t in listed] == [t.name for t in table]
    for got, expected in zip(listed, table, strict=True):
        assert got.input_schema == expected.input_schema, got.name
        assert got.description == expected.description
        assert got.annotations is not None
        assert got.annotations.read_only_hint is (expected.effect != "COMMAND")


@pytest.mark.parametrize(
    ("name", "arguments", "says"),
    [
        ("bars_list", {"limit": 1.5}, "bars_list: limit is a float"),
        ("backtests_submit", {"body": {"strategy_id": "s", "weights": [1, 2.5]}}, "body.weights[1] is a float"),
        ("bars_list", {"limt": 5}, "unknown arguments ['limt']"),
        ("backtests_get", {}, "missing arguments ['id']"),
        ("stream_bars", {"max_events": 0}, "max_events must be an integer from 1 to 1000"),
        ("no_such_tool", {}, "unknown tool 'no_such_tool'"),
    ],
    ids=["float", "nested-float", "unknown-argument", "missing-argument", "batch-bound", "unknown-tool"],
)
def test_a_refused_call_is_a_tool_error_naming_the_problem(name: str, arguments: dict[str, Any], says: str) -> None:
    """Refused before any request (the gateway here would not answer anyway)."""
    result = call(f"http://127.0.0.1:{closed_port()}", name, arguments)
    assert result.is_error is True
    [text] = texts(result)
    assert says in text


@pytest.mark.parametrize(
    ("name", "arguments"),
    [("health_get", {}), ("backtests_cancel", {"id": "job-1"}), ("stream_bars", {"max_events": 1, "seconds": 1})],
)
def test_an_unreachable_gateway_is_a_tool_error_without_its_address(name: str, arguments: dict[str, Any]) -> None:
    port = closed_port()
    result = call(f"http://127.0.0.1:{port}", name, arguments)
    assert result.is_error is True
    assert texts(result) == [f"{name}: the gateway did not answer; is it running?"]
    whole = result.model_dump_json(by_alias=True)
    assert "127.0.0.1" not in whole
    assert str(port) not in whole


# --- (c) a gateway on loopback ---------------------------------------------------------------


def test_an_answer_is_the_gateways_bytes_with_its_status() -> None:
    """A 200 is a result, a 403 envelope a tool error; each text is exactly the served bytes
    and ``_meta`` carries the status. The request paths are the tools' own."""
    routes: dict[str, Route] = {
        "/v2/health": lambda h: h.answer(200, HEALTH),
        "/v2/backtests/job-1/cancel": lambda h: h.answer(403, REFUSED),
    }
    with serving(routes) as server:

        async def work(client: Client) -> list[types.CallToolResult]:
            return [
                await client.call_tool("health_get", {}),
                await client.call_tool("backtests_cancel", {"id": "job-1"}),
            ]

        health, cancel = session(url(server), work)
    assert server.asked == ["/v2/health", "/v2/backtests/job-1/cancel"]
    assert (texts(health), health.is_error) == ([HEALTH.decode()], False)
    assert (texts(cancel), cancel.is_error) == ([REFUSED.decode()], True)
    assert health.meta is not None and health.meta["spine/status"] == 200
    assert cancel.meta is not None and cancel.meta["spine/status"] == 403


def test_a_stream_batch_ends_at_max_events_heartbeats_not_counted() -> None:
    frames = [("bar", BARS[0]), ("heartbeat", "{}"), ("bar", BARS[1]), ("bar", BARS[2])]
    with serving({"/v2/stream/bars": sse(*frames)}) as server:
        result = call(url(server), "stream_bars", {"max_events": 2, "seconds": 5})
    assert result.is_error is False
    assert texts(result) == BARS[:2]
    assert result.meta is not None
    assert (result.meta["spine/ended"], result.meta["spine/events"]) == ("count", ["bar", "bar"])


def test_a_stream_the_gateway_closes_ends_closed_with_every_event() -> None:
    with serving({"/v2/stream/bars": sse(*(("bar", b) for b in BARS))}) as server:
        result = call(url(server), "stream_bars", {"max_events": 10, "seconds": 5})
    assert texts(result) == BARS
    assert result.meta is not None and result.meta["spine/ended"] == "closed"


def test_a_silent_stream_ends_when_its_seconds_run_out() -> None:
    """One event, then an open, silent connection: seconds=1 returns that event, ended
    "seconds", well within a bounded time."""
    with serving({"/v2/stream/bars": sse(("bar", BARS[0]), hold=True)}) as server:
        started = time.monotonic()
        result = call(url(server), "stream_bars", {"max_events": 5, "seconds": 1})
        elapsed = time.monotonic() - started
    assert elapsed < 10
    assert (texts(result), result.is_error) == ([BARS[0]], False)
    assert result.meta is not None and result.meta["spine/ended"] == "seconds"


def test_a_stream_the_gateway_refuses_is_a_tool_error_with_its_envelope() -> None:
    busy = json.dumps(error_body("SUBSCRIBERS_FULL", "retry later")).encode()
    with serving({"/v2/stream/bars": lambda h: h.answer(503, busy)}) as server:
        result = call(url(server), "stream_bars", {"max_events": 2, "seconds": 5})
    assert (texts(result), result.is_error) == ([busy.decode()], True)
    assert result.meta is not None and result.meta["spine/status"] == 503
