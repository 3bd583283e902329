"""``spine web`` as a process on loopback in front of a real gateway: the UI's files, the host's
mode, and the same-origin proxy (reads and refusals relayed unchanged, streams piped, every
COMMAND refused on a public-readonly host whatever its verb, an unreachable gateway said so)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from gateways import raw, template_gateway
from nodes import envelope, free_port, get, post
from webs import spine_web


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, str]]:
    """The gateway (private-operator, the ema_cross template saved as ``ema``), a public-readonly
    web server and a private-operator one in front of it."""
    home = tmp_path_factory.mktemp("web")
    with template_gateway(home / "gateway") as gateway:
        with spine_web(home, gateway) as public, spine_web(home, gateway, "private-operator") as operator:
            yield gateway, public, operator


def test_the_ui_and_the_mode_are_served(stack: tuple[str, str, str]) -> None:
    _, public, operator = stack
    with urllib.request.urlopen(public + "/", timeout=10) as page:
        assert page.headers["content-type"].startswith("text/html")
        assert b'src="/static/app.js"' in page.read()
    for name, kind in (("app.js", "text/javascript"), ("style.css", "text/css")):
        with urllib.request.urlopen(f"{public}/static/{name}", timeout=10) as file:
            assert file.headers["content-type"].startswith(kind) and file.read()
    assert get(public + "/api/mode") == (200, {"deployment_mode": "public-readonly"})
    assert get(operator + "/api/mode") == (200, {"deployment_mode": "private-operator"})
    envelope(get(public + "/static/nope.js"), 404, "NOT_FOUND")
    envelope(get(public + "/static/..%2Fconfig.py"), 404, "NOT_FOUND")
    envelope(post(public + "/", {}), 405, "METHOD_NOT_ALLOWED")


@pytest.mark.parametrize(
    "path",
    [
        "/v2/strategy-templates/ema_cross",
        "/v2/strategies/ema",
        "/v2/backtests/" + "0" * 64,
        "/v2/studies?state=NOPE",
        "/v2/nowhere",
    ],
)
def test_reads_and_refusals_come_back_unchanged(stack: tuple[str, str, str], path: str) -> None:
    gateway, public, _ = stack
    assert raw(public + "/api/engine" + path) == raw(gateway + path)


COMMANDS = [
    ("POST", "/v2/backtests", {"strategy_id": "ema"}),
    ("POST", "/v2/studies", {"strategy_id": "ema"}),
    ("GET", "/v2/backtests/" + "0" * 64 + "/cancel", None),
    ("GET", "/v2/studies/" + "0" * 64 + "/cancel", None),
    ("GET", "/v2/studies/" + "0" * 64 + "/promote", None),
    ("POST", "/v2/selection", {"instrument_ids": ["BTCUSDT.SIM"]}),
    ("POST", "/v2/made-up", {}),
    ("DELETE", "/v2/strategies/ema", None),
]


@pytest.mark.parametrize(("method", "path", "body"), COMMANDS)
def test_a_public_host_refuses_every_mutation_whatever_its_verb(
    stack: tuple[str, str, str], method: str, path: str, body: object
) -> None:
    gateway, public, _ = stack
    before = get(gateway + "/v2/backtests")[1]["items"]
    text = envelope(send(public + "/api/engine" + path, method, body), 403, "MUTATION_REFUSED")
    assert "public-readonly" in text and path in text, text
    assert get(gateway + "/v2/backtests")[1]["items"] == before  # nothing reached the gateway


def test_an_operator_host_passes_commands_and_streams_through(stack: tuple[str, str, str]) -> None:
    gateway, _, operator = stack
    status, receipt = post(operator + "/api/engine/v2/backtests", {"strategy_id": "ema", "label": "through the proxy"})
    assert status == 202, receipt
    job = receipt["job_id"]
    assert get(f"{operator}/api/engine/v2/backtests/{job}/cancel")[1]["state"] == "CANCELLED"
    # The job has ended: its stream replays its events and ends, as the gateway's own does.
    with urllib.request.urlopen(f"{operator}/api/engine/v2/stream/backtests?job_id={job}", timeout=10) as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        through = stream.read()
    with urllib.request.urlopen(f"{gateway}/v2/stream/backtests?job_id={job}", timeout=10) as stream:
        assert through == stream.read()
    assert b"event: state" in through and b'"state":"CANCELLED"' in through


def test_an_unreachable_gateway_is_said_so_without_its_address(tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    with spine_web(tmp_path, dead) as web:
        for path in ("/v2/health", "/v2/stream/bars?instrument_id=BTCUSDT.SIM"):
            text = envelope(get(web + "/api/engine" + path), 502, "UPSTREAM_UNAVAILABLE")
            assert "the gateway" in text and "127.0.0.1" not in text, text


def send(url: str, method: str, body: object) -> tuple[int, object]:
    if method == "POST":
        return post(url, body)
    if method == "GET":
        return get(url)
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method=method), timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        with error:
            return error.code, json.loads(error.read())
