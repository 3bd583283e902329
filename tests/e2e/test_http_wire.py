"""Wire conventions of the v2 surface as a client reading the spec meets them, over a real
``spine node`` process: every body (an upgrade attempt's too) carries the envelope, every list
route pages with ``cursor``/``limit`` in and ``next_cursor`` out, and every route of the spec's
table answers as the capability registry says."""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit

import pytest
from nodes import envelope, get, ok

from reference.wire_validator import validate


def _raw_get(base: str, path: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    """A GET with exactly ``headers`` (urllib would replace ``Connection``)."""
    url = urlsplit(base)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    try:
        connection.request("GET", path, headers=headers)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


UPGRADE = {
    "Connection": "Upgrade",
    "Upgrade": "websocket",
    "Sec-WebSocket-Version": "13",
    "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
}


@pytest.mark.parametrize(
    ("path", "status", "schema"),
    [
        ("/v2/health", 200, "svc.health"),
        ("/v2/no/such/route", 404, "svc.error_envelope"),
    ],
)
def test_a_websocket_upgrade_is_answered_as_plain_http(base: str, path: str, status: int, schema: str) -> None:
    """The spec has no WebSocket protocol: an upgrade request is an ordinary GET, answered with a
    body that carries the wire version, never a bodiless refusal from the transport."""
    got, headers, body = _raw_get(base, path, UPGRADE)
    assert got == status and headers["content-type"] == "application/json", (got, headers, body)
    document = json.loads(body)
    assert document["version"] == "spine.v2"
    validate(document, schema)


@pytest.mark.parametrize(
    "path",
    [
        "/v2/strategies/s1/files/main.py",
        "/v2/strategies/s1/files/src/signals/main.py",
        "/v2/strategies/s1/revisions/r1/files/src/main.py",
    ],
)
def test_a_strategy_file_path_may_hold_slashes(base: str, path: str) -> None:
    """``{path}`` is a file path: a nested one reaches the route (not served by a venue node),
    never 'no route'."""
    envelope(get(base + path), 404, "NOT_SUPPORTED_ON_THIS_NODE")


def _walk(base: str, path: str, key: str, limit: int) -> tuple[list[Any], list[str]]:
    """Every item of a list route, page by page at ``limit``; and the cursors it was given."""
    items: list[Any] = []
    cursors: list[str] = []
    join = "&" if "?" in path else "?"
    page = ok(base, f"{path}{join}limit={limit}")
    while True:
        assert len(page[key]) <= limit, (path, page)
        items += page[key]
        if page["next_cursor"] is None:
            return items, cursors
        cursors.append(page["next_cursor"])
        page = ok(base, f"{path}{join}limit={limit}&cursor={page['next_cursor']}")


@pytest.mark.parametrize(("path", "key"), [("/v2/resolutions", "resolutions"), ("/v2/schemas", "schemas")])
def test_every_list_route_takes_cursor_and_limit(base: str, path: str, key: str) -> None:
    """The spec: one pagination envelope on every list route, these two included."""
    whole = ok(base, path)
    assert whole["next_cursor"] is None
    for limit in (1, 3):
        items, cursors = _walk(base, path, key, limit)
        assert items == whole[key], (path, limit)  # nothing lost, nothing repeated
        assert len(cursors) == -(-len(items) // limit) - 1
    _, [first, *_] = _walk(base, path, key, 1)
    envelope(get(f"{base}{path}?cursor={first[:-2]}AA"), 400, "INVALID_CURSOR")  # tampered
    envelope(get(f"{base}/v2/instruments?cursor={first}"), 400, "INVALID_CURSOR")  # foreign
    envelope(get(f"{base}{path}?limit=0"), 400, "LIMIT_OUT_OF_RANGE")


@pytest.mark.parametrize("path", ["/", "/nothing", "/favicon.ico", "/health/x", "/v1/bars", "/V2/health"])
def test_a_path_of_neither_generation_answers_the_v2_envelope(base: str, path: str) -> None:
    """Every response body carries ``version: spine.v2`` (the governed surface); only the v1
    routes themselves answer the v1 envelope. A path that is no route at all is not a v1 route."""
    envelope(get(base + path), 404, "NOT_FOUND")  # validates svc.error_envelope: version spine.v2


@pytest.mark.parametrize(
    ("method", "path", "version"),
    [
        ("DELETE", "/health", "spine.v1"),
        ("POST", "/v2/health", "spine.v2"),
        ("DELETE", "/v2/strategies/s1/files/src/main.py", "spine.v2"),
    ],
)
def test_a_405_answers_its_generations_envelope(base: str, method: str, path: str, version: str) -> None:
    request = urllib.request.Request(base + path, method=method)
    with pytest.raises(urllib.error.HTTPError) as error:
        urllib.request.urlopen(request, timeout=10)
    with error.value:
        assert error.value.code == 405 and error.value.headers["allow"] == "GET, HEAD"
        body = json.loads(error.value.read())
    assert body["version"] == version and body["error"]["detail"].startswith("METHOD_NOT_ALLOWED: "), body
