"""The v1 read surface of a running ``spine node`` (Granian on a loopback port): the twelve
read routes validated against schemas/v1/ by the stock jsonschema validator, other methods
refused, errors in the v1 envelope, and the v1 stream's run-scoped cursor with resume and
``event: resync``."""

from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from nodes import get

from reference.canonical_json import canonical_dumps
from reference.wire_validator import validate
from spine.http.routes import OPERATIONS

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"
# The twelve v1 runtime routes, read from the route table (tests/unit/test_v1_fixtures.py holds the
# table to the spec's list).
ROUTES = [op.path for op in OPERATIONS if op.wire_version == "v1" and op.fixture is None and op.effect == "QUERY"]


def ok(base: str, path: str) -> dict[str, Any]:
    status, document = get(base + path)
    assert status == 200, (path, document)
    assert document["version"] == "spine.v1"
    validate(document)
    return document


def refused(base: str, path: str, status: int, symbol: str, method: str = "GET") -> None:
    request = urllib.request.Request(base + path, method=method, data=b"{}" if method != "GET" else None)
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=10)
    assert caught.value.code == status
    with caught.value:
        body = json.loads(caught.value.read())
    validate(body, "v1.error_envelope")
    assert body["error"]["detail"].startswith(symbol + ": "), body


@pytest.mark.parametrize("path", [r if r != "/bars" else "/bars?instrument_id=BTCUSDT.SIM" for r in ROUTES])
def test_every_v1_route_serves_its_document(base: str, path: str) -> None:
    ok(base, path)


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
def test_other_methods_are_refused(base: str, route: str, method: str) -> None:
    refused(base, route, 405, "METHOD_NOT_ALLOWED", method)


def test_health_is_liveness_and_readiness_is_the_producers_counters(base: str) -> None:
    assert ok(base, "/health")["live"] is True
    readiness = ok(base, "/readiness")
    engine = get(base + "/v2/health")[1]["engine_status"]
    assert readiness["lifecycle"] == engine["lifecycle"] and readiness["run_id"] == engine["run_id"]
    assert [a["authority"] for a in readiness["authorities"]] == [a["authority"] for a in engine["authorities"]]
    assert ok(base, "/engine-status")["engine_status"]["run_id"] == engine["run_id"]


def test_bars_are_the_v2_rows(base: str) -> None:
    query = "bar_type=BTCUSDT.SIM-1-HOUR-LAST-EXTERNAL&limit=20"
    # The node ingests while the test reads: a minute that closes between the two reads
    # changes the page (a bucket withheld NOT_CLOSED appears). Compare v1 with a v2 page
    # that was the same before and after it (a few tries: a minute seldom closes between reads).
    for _ in range(5):
        before = get(base + f"/v2/bars?{query}")[1]
        v1 = ok(base, f"/bars?{query}")
        after = get(base + f"/v2/bars?{query}")[1]
        if before["bars"] == after["bars"] and before["withheld"] == after["withheld"]:
            break
    else:
        pytest.fail("the v2 page changed between every pair of reads")
    assert v1["bars"] == after["bars"] and v1["withheld"] == after["withheld"] and v1["bar_type"] == after["bar_type"]


def test_a_bars_cursor_pages_on_only_on_the_route_that_issued_it(base: str) -> None:
    query = "instrument_id=BTCUSDT.SIM&limit=2"
    v1, v2 = ok(base, f"/bars?{query}"), get(base + f"/v2/bars?{query}")[1]
    assert v1["next_cursor"] and v2["next_cursor"]
    ok(base, f"/bars?{query}&cursor={v1['next_cursor']}")
    assert get(base + f"/v2/bars?{query}&cursor={v2['next_cursor']}")[0] == 200
    for path in (f"/bars?{query}&cursor={v2['next_cursor']}", f"/v2/bars?{query}&cursor={v1['next_cursor']}"):
        status, body = get(base + path)
        assert status == 400 and body["error"]["detail"].startswith("INVALID_CURSOR: "), (path, body)


def test_catalog_lists_the_held_series(base: str) -> None:
    items, path = [], "/catalog?limit=50"
    while True:
        page = ok(base, path)
        items += page["items"]
        if page["next_cursor"] is None:
            break
        path = f"/catalog?limit=50&cursor={page['next_cursor']}"
    keys = [(i["instrument_id"], i["channel"]) for i in items]
    assert keys == sorted(set(keys)) and ("BTCUSDT.SIM", "EXTERNAL") in keys
    btc = next(i for i in items if (i["instrument_id"], i["channel"]) == ("BTCUSDT.SIM", "EXTERNAL"))
    assert btc["bars"] > 0 and int(btc["first_ts_event"]) <= int(btc["last_ts_event"])


def test_records_a_venue_node_never_produces_are_empty_pages(base: str) -> None:
    for route, kind in [
        ("/signals", "signals"),
        ("/chart-markers", "chart_markers"),
        ("/retirements", "retirements"),
        ("/screener-rows", "screener_rows"),
    ]:
        page = ok(base, route)
        assert (page["kind"], page["items"], page["next_cursor"]) == (kind, [], None)


def test_schemas_by_name_with_the_digest(base: str) -> None:
    index = ok(base, "/schemas")
    assert index["digest"] == get(base + "/v2/schemas")[1]["digest"] and len(index["schemas"]) >= 21
    with urllib.request.urlopen(base + "/schemas?name=svc.bar_envelope", timeout=10) as response:
        assert response.read() == (SCHEMAS / "svc.bar_envelope.json").read_bytes()
    refused(base, "/schemas?name=svc.nothing", 404, "NOT_FOUND")
    with pytest.raises(urllib.error.HTTPError) as caught:  # the refusal points at v1's own index
        urllib.request.urlopen(base + "/schemas?name=svc.nothing", timeout=10)
    with caught.value:
        assert json.loads(caught.value.read())["error"]["detail"].endswith("see /schemas")
    # The v1 documents are served by name too (outside the digest, which covers the v2 set).
    with urllib.request.urlopen(base + "/schemas?name=v1.health", timeout=10) as response:
        assert response.read() == (SCHEMAS / "v1" / "v1.health.json").read_bytes()
    refused(base, "/schemas?name=v1/v1.health.json", 404, "NOT_FOUND")  # a name, never a path


FIXTURES = Path(__file__).resolve().parents[2] / "python" / "spine" / "_fixtures"
FIXTURE_ROUTES = {
    "/fixtures/" + p.name.removeprefix("v1.").removesuffix(".json").replace("_", "-"): p
    for p in sorted(FIXTURES.glob("v1.*.json"))
}


@pytest.mark.parametrize("route", FIXTURE_ROUTES)
def test_each_fixture_route_answers_its_committed_documents_canonical_bytes(base: str, route: str) -> None:
    committed = json.loads(FIXTURE_ROUTES[route].read_bytes())
    with urllib.request.urlopen(base + route, timeout=10) as response:
        assert (response.status, response.headers["content-type"]) == (200, "application/json")
        body = response.read()
    assert body == canonical_dumps(committed)
    validate(json.loads(body))
    head = urllib.request.Request(base + route, method="HEAD")
    with urllib.request.urlopen(head, timeout=10) as response:
        assert response.status == 200 and response.read() == b""
        assert response.headers["content-length"] == str(len(body))
    refused(base, route, 405, "METHOD_NOT_ALLOWED", "POST")
    refused(base, route + "?limit=1", 400, "UNKNOWN_PARAMETER")


def test_there_are_seven_fixture_routes_in_the_registry_and_openapi(base: str) -> None:
    ids = {e["id"]: e for e in get(base + "/v2/registry")[1]["operations"]}
    fixtures = [e for i, e in ids.items() if i.startswith("spine.v1.fixtures.")]
    assert sorted(e["path"] for e in fixtures) == sorted(FIXTURE_ROUTES) and len(fixtures) == 7
    assert all((e["wire_version"], e["method"], e["availability"]) == ("v1", "GET", "READY") for e in fixtures)
    paths = get(base + "/v2/openapi.json")[1]["paths"]
    assert all(list(paths[route]) == ["get"] and paths[route]["get"]["parameters"] == [] for route in FIXTURE_ROUTES)


@pytest.mark.parametrize(
    ("path", "status", "symbol"),
    [
        ("/bars?instrument_id=BTCUSDT", 400, "INVALID_INSTRUMENT_ID"),
        ("/bars?bar_type=BTCUSDT.SIM-7-MINUTE-LAST-EXTERNAL", 400, "INVALID_BAR_TYPE"),
        ("/bars?instrument_id=BTCUSDT.SIM&cursor=forged", 400, "INVALID_CURSOR"),
        ("/bars?instrument_id=BTCUSDT.SIM&limit=0", 400, "LIMIT_OUT_OF_RANGE"),
        ("/bars?instrument_id=NOPE.SIM", 404, "NOT_FOUND"),
        ("/catalog?cursor=forged", 400, "INVALID_CURSOR"),
        ("/signals?limit=1001", 400, "LIMIT_OUT_OF_RANGE"),
        ("/signals?cursor=forged", 400, "INVALID_CURSOR"),
        ("/health?verbose=1", 400, "UNKNOWN_PARAMETER"),
        ("/stream?cursor=abc", 400, "INVALID_CURSOR"),
        ("/stream?cursor=%C2%B2", 400, "INVALID_CURSOR"),  # "²": a digit to str.isdigit, not a cursor
        ("/stream?cursor=%D9%A3", 400, "INVALID_CURSOR"),  # an Arabic-Indic three
        ("/stream?cursor=", 400, "INVALID_CURSOR"),
        ("/stream?cursor=00005", 400, "INVALID_CURSOR"),
        ("/stream?cursor=18446744073709551616", 400, "INVALID_CURSOR"),  # 2^64
        ("/stream?cursor=" + "9" * 5000, 400, "INVALID_CURSOR"),
        ("/schemas?name=" + "a" * 300, 404, "NOT_FOUND"),
        ("/stream?instrument_id=NOPE.SIM", 404, "NOT_FOUND"),
    ],
)
def test_v1_errors_answer_the_v1_envelope(base: str, path: str, status: int, symbol: str) -> None:
    refused(base, path, status, symbol)


def stream(
    url: str,
    events: int,
    timeout: float = 10.0,
    resync: bool = False,
) -> list[tuple[str | None, str, dict[str, Any]]]:
    """``(id, event, body)`` of the first ``events`` messages (heartbeats skipped; so are
    resyncs unless asked for: this slow reader against a 600x venue does drop events)."""
    out: list[tuple[str | None, str, dict[str, Any]]] = []
    with urllib.request.urlopen(url, timeout=timeout) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        ident, name = None, None
        for raw in response:
            line = raw.decode().rstrip("\n")
            if line.startswith("id: "):
                ident = line[4:]
            elif line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: ") and name is not None:
                body = json.loads(line[6:])
                if name == "resync":
                    validate(body)
                if name != "heartbeat" and (resync or name != "resync"):
                    out.append((ident, name, body))
                ident, name = None, None
                if len(out) >= events:
                    break
    return out


def test_the_v1_stream_numbers_events_and_resumes_from_a_cursor(base: str) -> None:
    first = stream(base + "/stream", 6)
    cursors = [int(body["cursor"]) for _, _, body in first]
    assert cursors == sorted(set(cursors)) and [int(i) for i, _, _ in first] == cursors
    for _, name, body in first:
        validate(body)
        assert body["kind"] == name
        validate(body["document"])
    resumed = stream(base + f"/stream?cursor={cursors[2]}", 3)
    assert [int(b["cursor"]) for _, _, b in resumed] == [cursors[2] + 1, cursors[2] + 2, cursors[2] + 3]
    if cursors[3] == cursors[2] + 1:
        assert resumed[0][2] == first[3][2]


def test_the_v1_stream_filters_by_instrument(base: str) -> None:
    events = stream(base + "/stream?instrument_id=ETHUSDT.SIM&cursor=0", 5)
    assert all(body["document"]["instrument_id"] == "ETHUSDT.SIM" for _, _, body in events)


def test_a_cursor_ahead_of_the_run_gets_resync(base: str) -> None:
    ((ident, name, body),) = stream(base + "/stream?cursor=18446744073709551615", 1, resync=True)
    assert (ident, name, body["reason"]) == (None, "resync", "CURSOR_AHEAD")
    validate(body)


def test_a_cursor_from_an_earlier_run_gets_resync(base: str) -> None:
    """This run numbers its events above its start time: any earlier run's cursor (the client
    saw it before a restart) lies below, and is told so rather than served this run's events."""
    ((_, _, first),) = stream(base + "/stream", 1)
    assert int(first["cursor"]) > 1_700_000_000 * 10**9  # above the run's start, in nanoseconds
    for earlier in ("0", "5", str(int(first["cursor"]) - 10**12)):
        ((ident, name, body),) = stream(base + f"/stream?cursor={earlier}", 1, resync=True)
        assert (ident, name, body["reason"], body["requested"]) == (None, "resync", "CURSOR_EXPIRED", earlier)
        validate(body)


def test_last_event_id_resumes_like_the_cursor(base: str) -> None:
    first = stream(base + "/stream", 3)
    request = urllib.request.Request(base + "/stream", headers={"Last-Event-ID": first[0][2]["cursor"]})
    with urllib.request.urlopen(request, timeout=10) as response:
        for raw in response:
            if raw.startswith(b"id: "):
                assert int(raw[4:]) == int(first[0][2]["cursor"]) + 1
                break


def _read_for(sock: socket.socket, seconds: float) -> bytes:
    """Everything the stream sends within ``seconds``."""
    chunks, deadline = [], time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        sock.settimeout(left)
        try:
            chunk = sock.recv(1 << 16)
        except TimeoutError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def _dechunk(body: bytes) -> bytes:
    """The payload of a chunked body (a cut-off last chunk is dropped)."""
    out, at = [], 0
    while (eol := body.find(b"\r\n", at)) > 0:
        size = int(body[at:eol], 16)
        if size == 0 or eol + 2 + size > len(body):
            break
        out.append(body[eol + 2 : eol + 2 + size])
        at = eol + 2 + size + 2
    return b"".join(out)


def test_a_client_that_stops_reading_loses_its_oldest_events_and_is_told(base: str) -> None:
    """A reader with a tiny receive window stops reading: its stream is held back, its queue
    drops its oldest events, and when it reads again a resync EVENTS_DROPPED comes first,
    then events whose cursors jump past the loss (the node itself never waited for it)."""
    host, port = base.removeprefix("http://").split(":")
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect((host, int(port)))
        sock.sendall(f"GET /stream HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        received, hold = b"", 3.0
        for _ in range(4):  # bounded: at most 3 + 6 + 12 + 24 s idle
            time.sleep(hold)
            received += _read_for(sock, 2.0)
            if b'"reason":"EVENTS_DROPPED"' in received:
                break
            hold *= 2
        assert get(base + "/v2/health")[0] == 200  # the node kept serving
    assert b'"reason":"EVENTS_DROPPED"' in received, "the stream never announced a loss"
    frames = _dechunk(received.split(b"\r\n\r\n", 1)[1]).split(b"\n\n")
    at = next(k for k, f in enumerate(frames) if b'"reason":"EVENTS_DROPPED"' in f)
    resync = json.loads(frames[at].split(b"data: ", 1)[1])
    validate(resync)
    before = [int(f.split(b"\n", 1)[0][4:]) for f in frames[:at] if f.startswith(b"id: ")]
    after = [int(f.split(b"\n", 1)[0][4:]) for f in frames[at + 1 :] if f.startswith(b"id: ")]
    assert before and after and after[0] > before[-1] + 1  # a gap: the dropped events
    assert after == sorted(after)
