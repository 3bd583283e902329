"""The node's HTTP surface under adversarial clients, over a real ``spine node`` process: a
HEAD answers exactly the GET's status and headers (its length included), and a client that
stops sending a request body midway gets the envelope within the body deadline instead of
holding its request open."""

from __future__ import annotations

import http.client
import json
import socket
import time
from urllib.parse import urlsplit

import pytest

from reference.wire_validator import validate
from test_http_contract import base  # noqa: F401 - the running node fixture


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


@pytest.mark.parametrize("path", [
    "/v2/resolutions", "/v2/registry", "/v2/openapi.json", "/v2/schemas/svc.health.json",
    "/v2/bars?instrument_id=BTCUSDT.SIM&limit=3", "/v2/bars?limit=0", "/v2/nothing", "/v2/accounts",
    "/v2/screener/rows", "/health", "/catalog?limit=2", "/schemas?name=v1.health",
])
def test_head_answers_the_gets_status_and_headers_content_length_included(base: str, path: str) -> None:  # noqa: F811
    """RFC 9110 9.3.2: the same header fields as the GET, Content-Length with the GET's length
    (routes whose document stays the same between the two requests)."""
    head, got = _head_then_get(base, path)
    assert head[:2] == got[:2] and head[2] == b""
    assert head[1]["content-length"] == str(len(got[2]))
