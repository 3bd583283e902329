"""The node's HTTP surface under adversarial clients, over a real ``spine node`` process: a
HEAD answers exactly the GET's status and headers (its length included), and a client that
stops sending a request body midway gets the envelope within the body deadline instead of
holding its request open."""

from __future__ import annotations

import http.client
import json
import socket
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from nodes import running_node

from reference.wire_validator import validate

#: The node's body deadline here (the default is 10 s; a test waits for this one).
BODY_SECS = 0.5


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_node(tmp_path_factory.mktemp("robust"), f"http_body_secs = {BODY_SECS}\n") as url:
        yield url


def _head_then_get(base: str, path: str) -> list[tuple[int, dict[str, str], bytes]]:
    """A HEAD and then a GET of ``path`` on one kept-alive connection (were any body bytes
    sent after the HEAD's headers, the GET's answer would not parse)."""
    url = urlsplit(base)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    answers = []
    try:
        for method in ("HEAD", "GET"):
            connection.request(method, path)
            response = connection.getresponse()
            headers = {k.lower(): v for k, v in response.getheaders() if k.lower() != "date"}
            answers.append((response.status, headers, response.read()))
        return answers
    finally:
        connection.close()


@pytest.mark.parametrize(
    "path",
    [
        "/v2/resolutions",
        "/v2/registry",
        "/v2/openapi.json",
        "/v2/schemas/svc.health.json",
        "/v2/bars?instrument_id=BTCUSDT.SIM&limit=3",
        "/v2/bars?limit=0",
        "/v2/nothing",
        "/v2/accounts",
        "/v2/screener/rows",
        "/health",
        "/catalog?limit=2",
        "/schemas?name=v1.health",
    ],
)
def test_head_answers_the_gets_status_and_headers_content_length_included(base: str, path: str) -> None:
    """RFC 9110 9.3.2: the same header fields as the GET, Content-Length with the GET's length
    (routes whose document stays the same between the two requests)."""
    head, got = _head_then_get(base, path)
    assert head[:2] == got[:2] and head[2] == b""
    assert head[1]["content-length"] == str(len(got[2]))


def _raw(base: str, request: bytes, seconds: float = 10) -> tuple[bytes, float]:
    """Send ``request`` bytes and read until the node closes (or ``seconds`` pass); the answer
    and how long it took."""
    url = urlsplit(base)
    started = time.monotonic()
    with socket.create_connection((url.hostname, url.port), timeout=seconds) as sock:
        sock.sendall(request)
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except TimeoutError:
            pass
    return answer, time.monotonic() - started


@pytest.mark.parametrize("sent", [b"", b'{"text": "bt'])
def test_a_body_that_stops_arriving_is_refused_at_the_deadline(base: str, sent: bytes) -> None:
    """A client that announces a body and sends less of it (or none) holds no request open: at
    ``http_body_secs`` it gets 400 INVALID_BODY in the envelope and the connection closes."""
    head = b"POST /v2/instruments/search HTTP/1.1\r\nHost: x\r\ncontent-length: 100\r\n\r\n"
    answer, took = _raw(base, head + sent)
    status, _, body = answer.partition(b"\r\n\r\n")
    assert status.startswith(b"HTTP/1.1 400 "), answer
    document = json.loads(body)
    validate(document, "svc.error_envelope")
    assert document["error"]["detail"].startswith("INVALID_BODY: "), document
    assert f"within {BODY_SECS} s" in document["error"]["detail"]
    assert BODY_SECS <= took < BODY_SECS + 5


def _answer(base: str, request: bytes) -> bytes:
    """The bytes a raw request gets back, to the connection's close."""
    address = urlsplit(base)
    with socket.create_connection((address.hostname, address.port), timeout=10) as connection:
        connection.sendall(request)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    return answer


def test_a_long_uri_gets_the_envelope_and_what_the_server_refuses_first_is_bodiless(base: str) -> None:
    """Up to the transport's own limits the app answers, with the envelope (414 URI_TOO_LONG
    past 8 KiB); a request line or headers the transport cannot parse are refused by Granian
    (hyper) before the app sees them, without a body: documented in contract.md."""
    from spine.http.app import MAX_URI_BYTES

    connection = http.client.HTTPConnection(urlsplit(base).netloc, timeout=10)
    connection.request("GET", "/v2/instruments?cursor=" + "a" * MAX_URI_BYTES)
    response = connection.getresponse()
    body = json.loads(response.read())
    assert response.status == 414 and body["error"]["code"] == 41401, body
    assert body["error"]["detail"].startswith("URI_TOO_LONG: ") and str(MAX_URI_BYTES) in body["error"]["detail"]
    connection.close()
    head, _, rest = _answer(base, b"GARBAGE\r\n\r\n").partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 ") and rest == b""  # the transport's, before any app
