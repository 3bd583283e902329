"""``spine gateway`` in front of a real node and a real screener (loopback subprocesses): its
own health, status and merged registry; instruments merged under its own cursor; bars relayed
byte for byte; screener routes relayed exactly; a venue no node serves; COMMAND operations
refused in public-readonly. Documents are checked by the independent validator."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gateways import raw, relayed_unchanged, spawn_gateway
from nodes import envelope, get, post, stop, wait_for
from screeners import ok, screener

from reference.wire_validator import validate

__all__ = ["screener"]  # the fixture, imported for this module's tests

IID = "BTCUSDT.SIM"


@pytest.fixture(scope="module")
def gateway(base: str, screener: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    process, url = spawn_gateway(tmp_path_factory.mktemp("gateway"), [base], screener)
    try:
        wait_for(process, lambda: get(url + "/v2/health")[1]["ready"] is True, "ready")
        wait_for(process, lambda: all(u["reachable"] for u in get(url + "/v2/status")[1]["upstreams"]), "upstreams")
        yield url
    finally:
        out, err = stop(process)
        assert process.returncode == 0, err


def test_health_status_and_registry(gateway: str, base: str, screener: str) -> None:
    health = ok(gateway + "/v2/health")
    assert health["ready"] and not health["degraded"] and health["deployment_mode"] == "public-readonly"
    status = ok(gateway + "/v2/status")
    deadline = time.monotonic() + 60  # the node's venues arrive with the gateway's next look at it
    while not status["upstreams"][0].get("venues") and time.monotonic() < deadline:
        time.sleep(0.2)
        status = ok(gateway + "/v2/status")
    assert [(u["kind"], u["name"], u["reachable"]) for u in status["upstreams"]] == [
        ("node", "node-1", True),
        ("screener", "screener", True),
    ]
    assert base not in str(status) and screener not in str(status)  # addresses: an operator's only
    assert status["upstreams"][0]["venues"] == ["SIM"]
    availability = {e["id"]: e["availability"] for e in ok(gateway + "/v2/registry")["operations"]}
    assert availability["spine.bars.list"] == availability["spine.screener.screen"] == "READY"
    assert availability["spine.health.get"] == availability["spine.status.get"] == "READY"
    assert availability["spine.selection.set"] == "DISABLED"  # public-readonly
    assert availability["spine.backtests.list"] == "READY"
    assert availability["spine.studies.list"] == "READY"
    assert availability["spine.orders.list"] == "UNAVAILABLE"


def test_instruments_merge_under_the_gateways_cursor(gateway: str, base: str) -> None:
    def walk(url: str) -> list[dict[str, Any]]:
        page, items = ok(url + "/v2/instruments?limit=7"), []
        items += page["items"]
        while page["next_cursor"] is not None:
            page = ok(url + f"/v2/instruments?limit=7&cursor={page['next_cursor']}")
            items += page["items"]
        return items

    assert walk(gateway) == walk(base)
    node_cursor = ok(base + "/v2/instruments?limit=7")["next_cursor"]
    envelope(get(gateway + f"/v2/instruments?limit=7&cursor={node_cursor}"), 400, "INVALID_CURSOR")
    gateway_cursor = ok(gateway + "/v2/instruments?limit=7")["next_cursor"]
    envelope(get(gateway + f"/v2/instruments?limit=8&cursor={gateway_cursor}"), 400, "INVALID_CURSOR")


def test_bars_are_relayed_byte_for_byte(gateway: str, base: str) -> None:
    newest = ok(base + f"/v2/bars?instrument_id={IID}&limit=1")["bars"]
    query = f"/v2/bars?instrument_id={IID}&limit=200&end=1740000000000000000"
    assert relayed_unchanged(gateway, base, query)
    assert raw(gateway + "/v2/coverage/" + IID)[0] == 200 and newest
    status, body = raw(gateway + "/v2/bars?instrument_id=NOPE.SIM")
    assert (status, body) == raw(base + "/v2/bars?instrument_id=NOPE.SIM")
    detail = envelope(get(gateway + "/v2/bars?instrument_id=BTCUSDT.ELSEWHERE"), 404, "NOT_FOUND")
    assert "venue 'ELSEWHERE'" in detail and "SIM" in detail


def test_screener_routes_are_relayed(gateway: str, screener: str) -> None:
    validate(ok(gateway + "/v2/screener/health"))
    definition = {
        "version": "spine.v2",
        "schema_id": "svc.screen_definition",
        "schema_version": 1,
        "resolutions": ["1m"],
        "instrument_ids": [IID],
        "filter": None,
        "sort": [],
        "limit": 5,
        "as_of": None,
    }
    status, result = post(gateway + "/v2/screener/screen", definition)
    assert status == 200 and result["definition"] == definition
    validate(result)
    assert post(gateway + "/v2/screener/screen", b"{bad") == post(screener + "/v2/screener/screen", b"{bad")
    assert ok(gateway + f"/v2/screener/instrument/{IID}")["instrument_id"] == IID


def test_commands_are_refused_in_public_readonly(gateway: str) -> None:
    detail = envelope(post(gateway + "/v2/selection", {"instrument_ids": [IID]}), 403, "MUTATION_REFUSED")
    assert "public-readonly" in detail


def test_v1_fixtures_are_the_same_bytes_on_every_process(gateway: str, base: str, screener: str) -> None:
    """Each process answers a fixture route itself (it needs no upstream), with identical bytes."""
    for route in ("/fixtures/bars", "/fixtures/resync"):
        answers = {raw(url + route) for url in (gateway, base, screener)}
        assert len(answers) == 1 and next(iter(answers))[0] == 200, answers


def test_a_stopped_screener_is_reported_stopped(base: str, tmp_path: Path) -> None:
    from screeners import spawn_screener

    screener_process, screener_url = spawn_screener(tmp_path / "screener", base)
    process, url = spawn_gateway(tmp_path / "gateway", [base], screener_url)
    try:
        wait_for(screener_process, lambda: get(screener_url + "/v2/screener/health")[0] == 200, "screener up")
        wait_for(process, lambda: get(url + "/v2/screener/health")[0] == 200, "relaying")
        stop(screener_process)
        wait_for(process, lambda: get(url + "/v2/screener/health")[1]["process_state"] == "STOPPED", "stopped")
        health = ok(url + "/v2/screener/health")
        assert (
            health["last_error"].startswith("screener: GET /v2/screener/health: ")
            and health["connections"]["open"] == 0
        )
        assert "127.0.0.1" not in str(health) and "Error" not in health["last_error"], health
        assert health["egress"] is None
        assert (
            envelope(get(url + "/v2/screener/rows"), 502, "UPSTREAM_UNAVAILABLE")
            == "screener: GET /v2/screener/rows: connection refused or unreachable"
        )
        wait_for(process, lambda: get(url + "/v2/health")[1]["degraded"] is True, "degraded")
        assert ok(url + "/v2/health")["degraded_reasons"] == ["SCREENER_UNREACHABLE"]
        availability = {e["id"]: e["availability"] for e in ok(url + "/v2/registry")["operations"]}
        assert availability["spine.screener.rows"] == "UNKNOWN" and availability["spine.bars.list"] == "READY"
        assert raw(url + f"/v2/bars?instrument_id={IID}&limit=5&end=1740000000000000000")[0] == 200
    finally:
        stop(process)
        stop(screener_process)


def test_every_command_operation_is_refused_in_public_readonly(gateway: str) -> None:
    operations = ok(gateway + "/v2/registry")["operations"]
    commands = [op for op in operations if op["effect"] == "COMMAND"]
    assert len(commands) >= 10 and all(
        op["availability"] in ("DISABLED", "UNAVAILABLE", "UNSUPPORTED") for op in commands
    )
    for op in commands:
        path = op["path"].replace("{id}", "x1")
        code, body = post(gateway + path, {}) if op["method"] == "POST" else get(gateway + path)
        assert code == 403 and body["error"]["detail"].startswith("MUTATION_REFUSED: "), (op["id"], code, body)


def test_a_hung_node_stalls_no_request_for_the_others(base: str, screener: str, tmp_path: Path) -> None:
    """A second "node" that accepts connections and never answers: the gateway's requests to it
    time out on their own, while the real node's routes answer at once and health says why."""
    import socket
    import threading
    import time

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    held: list[socket.socket] = []

    def hold() -> None:
        try:
            for _ in range(64):
                held.append(listener.accept()[0])
        except OSError:
            pass  # the listener closed at the end of the test

    threading.Thread(target=hold, daemon=True).start()
    hung = f"http://127.0.0.1:{listener.getsockname()[1]}"
    process, url = spawn_gateway(tmp_path, [base, hung], screener, "upstream_timeout_secs = 2\n")
    try:
        wait_for(process, lambda: get(url + "/v2/health")[1]["degraded"] is True, "degraded by the hung node")
        for _ in range(5):
            started = time.monotonic()
            assert raw(url + f"/v2/bars?instrument_id={IID}&limit=5")[0] == 200
            assert time.monotonic() - started < 2.0  # under the hung node's timeout: it never waited for it
        status = ok(url + "/v2/status")["upstreams"]
        assert status[1]["name"] == "node-2" and status[1]["reachable"] is False
        assert status[1]["last_error"].endswith("no answer within the timeout"), status[1]
        assert hung not in str(status)
    finally:
        stop(process)
        listener.close()
        for connection in held:
            connection.close()
