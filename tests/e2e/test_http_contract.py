"""Contract tests over HTTP: ``spine node`` runs as a real process (Granian on a loopback
port, the simulated venue accelerated); every route is called and every response and SSE event
is validated against schemas/ by the stock jsonschema validator; every error path answers the
error envelope with the published code."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from nodes import envelope, get, ok, post, refused, running_node, sse

from reference.search_rank import search as reference_search
from reference.wire_validator import validate

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"


@pytest.mark.parametrize(
    "path",
    [
        "/v2/health",
        "/v2/status",
        "/v2/registry",
        "/v2/engine-pin",
        "/v2/connection",
        "/v2/resolutions",
        "/v2/instruments",
        "/v2/instruments?limit=5",
        "/v2/hydration",
        "/v2/hydration/BTCUSDT.SIM",
        "/v2/coverage",
        "/v2/coverage/failures",
        "/v2/coverage/quiet",
        "/v2/coverage/BTCUSDT.SIM",
        "/v2/facts?kind=mark_price",
        "/v2/facts?kind=funding_rate",
        "/v2/data/index_price",
        "/v2/data/option_greeks",
        "/v2/data/instrument_status",
        "/v2/bars?instrument_id=BTCUSDT.SIM",
        "/v2/bars?bar_type=BTCUSDT.SIM-1-MINUTE-LAST-INTERNAL",
        "/v2/bars?bar_type=ETHUSDT-PERP.SIM-5-MINUTE-LAST-EXTERNAL",
        "/v2/bars?bar_type=BTCUSDT.SIM-1-HOUR-LAST-EXTERNAL",
        "/v2/bars?bar_type=BTCUSDT.SIM-1-DAY-LAST-EXTERNAL",
        "/v2/schemas",
        "/v2/selection",
        "/v2/selection?limit=5",
    ],
)
def test_every_read_route_serves_a_schema_valid_document(base: str, path: str) -> None:
    ok(base, path)


def test_status_reports_the_observed_connection_and_rates_at_one_scale(base: str) -> None:
    status, connection = ok(base, "/v2/status"), ok(base, "/v2/connection")
    [venue] = status["connectivity"]
    assert status["state"] == "RUNNING"
    assert venue["connected"] is (connection["state"] == "CONNECTED") is True
    # The time the watch saw the connection come up, not the process start.
    assert venue["since"] == connection["since"] and venue["since"] != status["started_ts"]
    assert all(len(rate.partition(".")[2]) == 3 for rate in status["rates"].values()), status["rates"]


def test_paging_walks_every_instrument_once_with_opaque_cursors(base: str) -> None:
    seen, path = [], "/v2/instruments?limit=7"
    while True:
        page = ok(base, path)
        seen += [item["instrument_id"] for item in page["items"]]
        if page["next_cursor"] is None:
            break
        path = f"/v2/instruments?limit=7&cursor={page['next_cursor']}"
    assert len(seen) == len(set(seen)) == 48 and seen == sorted(seen)


def test_bar_pages_follow_after_sequence_and_carry_coverage(base: str) -> None:
    page = ok(base, "/v2/bars?instrument_id=BTCUSDT.SIM&limit=3")
    assert len(page["bars"]) == 3 and page["coverage"]["instrument_id"] == "BTCUSDT.SIM"
    assert page["coverage"]["retention_state"] == "unmanaged"  # this node has no manifest
    after = page["bars"][-1]["sequence"]
    later = ok(base, f"/v2/bars?instrument_id=BTCUSDT.SIM&after_sequence={after}&limit=3")
    assert all(bar["sequence"] > after for bar in later["bars"])
    cursor = ok(base, f"/v2/bars?instrument_id=BTCUSDT.SIM&limit=3&cursor={page['next_cursor']}")
    assert cursor["bars"][0]["ts_event"] > page["bars"][-1]["ts_event"]


def test_the_registry_lists_every_route_with_its_availability(base: str) -> None:
    registry = ok(base, "/v2/registry")
    by_path = {(op["method"], op["path"]): op for op in registry["operations"]}
    assert by_path[("GET", "/v2/bars")]["availability"] == "READY"
    assert by_path[("GET", "/v2/orders")]["availability"] == "UNAVAILABLE"
    assert by_path[("POST", "/v2/orders")]["requires_confirmation"] is True
    # Served here, refused by this public-readonly host: DISABLED (a private-operator node: READY).
    assert by_path[("POST", "/v2/selection")]["availability"] == "DISABLED"
    assert by_path[("POST", "/v2/instruments/search")]["availability"] == "READY"  # a QUERY
    assert all(op["availability"] != "UNPUBLISHED" for op in registry["operations"])
    openapi = get(base + "/v2/openapi.json")[1]
    assert set(openapi["paths"]) == {path for _, path in by_path}


@pytest.mark.parametrize(
    ("path", "status", "symbol"),
    [
        ("/v2/bars?instrument_id=BTCUSDT", 400, "INVALID_INSTRUMENT_ID"),
        ("/v2/bars?bar_type=BTCUSDT.SIM-7-MINUTE-LAST-EXTERNAL", 400, "INVALID_BAR_TYPE"),
        ("/v2/bars?bar_type=nonsense", 400, "INVALID_BAR_TYPE"),
        ("/v2/bars?instrument_id=BTCUSDT.SIM&cursor=forged", 400, "INVALID_CURSOR"),
        ("/v2/bars?instrument_id=BTCUSDT.SIM&limit=0", 400, "LIMIT_OUT_OF_RANGE"),
        ("/v2/bars?instrument_id=BTCUSDT.SIM&limit=5001", 400, "LIMIT_OUT_OF_RANGE"),
        ("/v2/bars?instrument_id=BTCUSDT.SIM&start=-1", 400, "INVALID_PARAMETER"),
        ("/v2/bars?instrument_id=BTCUSDT.SIM&start=10&end=9", 400, "INVALID_PARAMETER"),
        ("/v2/bars?instrument_id=BTCUSDT.SIM&after_sequence=abc", 400, "INVALID_PARAMETER"),
        ("/v2/bars?instrument_id=BTCUSDT.SIM&limit=010", 400, "LIMIT_OUT_OF_RANGE"),
        ("/v2/bars?instrument_id=BTCUSDT.SIM&start=%FF", 400, "INVALID_PARAMETER"),
        ("/v2/bars?bar_type=" + "A" * 5000 + ".SIM-1-MINUTE-LAST-EXTERNAL", 400, "INVALID_BAR_TYPE"),
        ("/v2/schemas/" + "a" * 300 + ".json", 404, "NOT_FOUND"),
        ("/v2", 404, "NOT_FOUND"),
        ("/V2/health", 404, "NOT_FOUND"),
        ("/v2/bars?instrument_id=BTCUSDT.SIM&colour=red", 400, "UNKNOWN_PARAMETER"),
        ("/v2/bars?instrument_id=NOPE.SIM", 404, "NOT_FOUND"),
        ("/v2/instruments?cursor=forged", 400, "INVALID_CURSOR"),
        ("/v2/instruments?limit=abc", 400, "LIMIT_OUT_OF_RANGE"),
        ("/v2/facts?kind=option_greeks", 404, "UNKNOWN_KIND"),
        ("/v2/facts?kind=volume", 404, "UNKNOWN_KIND"),
        ("/v2/facts", 400, "INVALID_PARAMETER"),
        ("/v2/data/liquidation", 404, "UNKNOWN_KIND"),
        ("/v2/coverage/NOPE.SIM", 404, "NOT_FOUND"),
        ("/v2/coverage/bad", 400, "INVALID_INSTRUMENT_ID"),
        ("/v2/hydration?cursor=x", 400, "INVALID_CURSOR"),
        ("/v2/account", 501, "CAPABILITY_DEFERRED"),
        ("/v2/positions", 501, "CAPABILITY_DEFERRED"),
        ("/v2/sandbox/status", 501, "CAPABILITY_DEFERRED"),
        ("/v2/screener/rows", 404, "NOT_SUPPORTED_ON_THIS_NODE"),
        ("/v2/readiness", 404, "NOT_FOUND"),
        ("/v2/nothing/here", 404, "NOT_FOUND"),
        ("/v2/schemas/svc.nothing.json", 404, "NOT_FOUND"),
        ("/v2/schemas/v1.bars.json", 404, "NOT_FOUND"),  # v1 documents: outside the v2 set and its digest
        ("/v2/selection?cursor=forged", 400, "INVALID_CURSOR"),
        ("/v2/selection?limit=1001", 400, "LIMIT_OUT_OF_RANGE"),
        ("/v2/instruments/search/" + "0" * 64, 404, "NOT_FOUND"),
        ("/v2/instruments/search/not-a-search-id", 400, "INVALID_PARAMETER"),
        ("/v2/instruments/search/" + "A" * 64, 400, "INVALID_PARAMETER"),
    ],
)
def test_error_paths_answer_the_envelope(base: str, path: str, status: int, symbol: str) -> None:
    refused(base, path, status, symbol)


def test_a_wrong_method_is_405(base: str) -> None:
    request = urllib.request.Request(base + "/v2/bars", method="POST", data=b"{}")
    with pytest.raises(urllib.error.HTTPError) as error:
        urllib.request.urlopen(request, timeout=10)
    assert error.value.code == 405
    with error.value:
        body = json.loads(error.value.read())
    validate(body, "svc.error_envelope")
    assert body["error"]["detail"].startswith("METHOD_NOT_ALLOWED: ")


@pytest.mark.parametrize(
    ("path", "event", "schema"),
    [
        ("/v2/stream/bars?instrument_id=BTCUSDT.SIM", "bar", "svc.bar_envelope"),
        ("/v2/stream/quotes?instrument_id=ETHUSDT.SIM", "quote", "svc.quote_tick"),
        ("/v2/stream/trades", "trade", "svc.trade_tick"),
    ],
)
def test_streams_deliver_schema_valid_events_filtered_at_enqueue(base: str, path: str, event: str, schema: str) -> None:
    events = sse(base + path, 5)
    assert len(events) == 5
    for name, document in events:
        assert name == event
        validate(document, schema)
        if "instrument_id=" in path:
            assert document["instrument_id"] == path.split("instrument_id=")[1]


@pytest.mark.parametrize(
    ("query", "resolution", "channel"),
    [
        ("resolution=1s", "1s", "INTERNAL"),
        ("resolution=1m&channel=INTERNAL", "1m", "INTERNAL"),
        ("channel=EXTERNAL&resolution=1m", "1m", "EXTERNAL"),
    ],
)
def test_the_bar_stream_keeps_only_the_resolution_and_channel_asked_for(
    base: str, query: str, resolution: str, channel: str
) -> None:
    events = [doc for name, doc in sse(base + "/v2/stream/bars?" + query, 4, timeout=30) if name == "bar"]
    assert events, query
    for document in events:
        validate(document, "svc.bar_envelope")
        assert (document["resolution"], document["channel"]) == (resolution, channel), query


@pytest.mark.parametrize(
    "query", ["resolution=garbage", "channel=nope", "resolution=1M", "resolution=", "resolution=1s&channel=EXTERNAL"]
)
def test_a_bar_stream_filter_outside_its_values_is_refused(base: str, query: str) -> None:
    text = envelope(get(base + "/v2/stream/bars?" + query), 400, "INVALID_PARAMETER")
    assert "allowed: " in text or "INTERNAL only" in text


def test_a_quiet_stream_sends_heartbeats_at_the_configured_interval(tmp_path: Path) -> None:
    """A real-time venue without the 1-second tier: a one-instrument bar stream is quiet for
    up to a minute, so what arrives first are heartbeats, every ``stream_heartbeat_secs``."""
    settings = "stream_heartbeat_secs = 0.3\nseconds_prefix = 0\n"
    with running_node(tmp_path, settings, warm_bars=0, SPINE_SIM_SPEED="1") as url:
        started = time.monotonic()
        events = sse(url + "/v2/stream/bars?instrument_id=BTCUSDT.SIM", 3)
        elapsed = time.monotonic() - started
    beats = [document for name, document in events if name == "heartbeat"]
    assert len(beats) >= 2, events
    for document in beats:
        validate(document, "svc.stream_heartbeat")
        assert document["version"] == "spine.v2"
        assert document["ts_event"].isdigit()
    assert int(beats[1]["ts_event"]) > int(beats[0]["ts_event"])
    assert elapsed < 5  # three 0.3 s periods, not 15 s ones


def test_the_schema_index_serves_every_file_and_their_digest(base: str) -> None:
    import hashlib

    index = ok(base, "/v2/schemas")
    for name, digest, files in (
        ("spec", index["digest"], sorted(SCHEMAS.glob("*.json"))),
        ("own", index["own_digest"], sorted(SCHEMAS.glob("own/*.json"))),
    ):
        entries = [entry for entry in index["schemas"] if entry["set"] == name]
        assert [entry["file"] for entry in entries] == [p.name for p in files]
        hasher = hashlib.sha256()
        for entry in entries:
            with urllib.request.urlopen(base + entry["path"], timeout=10) as response:
                hasher.update(response.read())
        assert digest == "sha256:" + hasher.hexdigest()
        assert digest == "sha256:" + hashlib.sha256(b"".join(p.read_bytes() for p in files)).hexdigest()
    assert len([entry for entry in index["schemas"] if entry["set"] == "spec"]) == 58


# connection, selection and instrument search


def test_connection_state_names_the_venue_and_its_connected_client(base: str) -> None:
    state = ok(base, "/v2/connection")
    assert state["schema_id"] == "svc.connection_state"
    assert (state["integration"], state["venue"], state["state"]) == ("sim", "SIM", "CONNECTED")
    assert state["data_clients"] == [{"client_id": "SIM", "connected": True}]
    assert state["since"] is not None and int(state["since"]) <= int(state["ts_event"])
    assert ok(base, "/v2/connection")["since"] == state["since"]  # a state keeps its start


def test_an_unmanaged_selection_lists_every_instrument_selected(base: str) -> None:
    rows, path = [], "/v2/selection?limit=20"
    while path:
        page = ok(base, path)
        rows += page["items"]
        path = page["next_cursor"] and f"/v2/selection?limit=20&cursor={page['next_cursor']}"
    assert [r["instrument_id"] for r in rows] == sorted(
        i["instrument_id"] for i in ok(base, "/v2/instruments?limit=100")["items"]
    )
    assert all(r["selected"] and r["retention_state"] == "unmanaged" and r["manifest"] is None for r in rows)
    assert sum(r["second_tier"] for r in rows) == 25
    ledger = ok(base, "/v2/coverage/ETHUSDT-PERP.SIM")["items"][0]["channels"]
    row = next(r for r in rows if r["instrument_id"] == "ETHUSDT-PERP.SIM")
    assert row["channels"] == [c["channel"] for c in ledger if c["eligibility"] == "eligible"]


@pytest.mark.parametrize("path", ["/v2/selection", "/v2/selection/remove"])
@pytest.mark.parametrize("body", [{"instrument_ids": ["BTCUSDT.SIM"]}, b"not json"])
def test_roster_changes_are_refused_on_a_public_readonly_host(base: str, path: str, body: object) -> None:
    text = envelope(post(base + path, body), 403, "MUTATION_REFUSED")
    assert f"POST {path}" in text and "public-readonly" in text and "private-operator" in text


def search(base: str, body: object) -> dict[str, Any]:
    status, result = post(base + "/v2/instruments/search", body)
    assert status == 200, result
    validate(result)
    assert result["schema_id"] == "svc.search_result"
    return result


def test_search_ranks_like_the_reference_and_keeps_its_result(base: str) -> None:
    instruments = ok(base, "/v2/instruments?limit=100")["items"]
    for text, classes in [("ETHUSDT", None), ("btc", None), ("usdt", ["SWAP"]), ("-C", ["OPTION", "SPOT"])]:
        body: dict[str, Any] = {"text": text} if classes is None else {"text": text, "instrument_classes": classes}
        result = search(base, {**body, "limit": 5})
        expected = reference_search(instruments, text, classes)
        assert result["items"] == expected[:5] and result["total"] == len(expected), text
        assert result["query"]["limit"] == 5 and result["query"]["text"] == text
        assert get(base + "/v2/instruments/search/" + result["search_id"]) == (200, result)
    assert search(base, {"text": "ETHUSDT"})["items"][0]["instrument_id"] == "ETHUSDT.SIM"  # exact first


def test_a_search_pages_through_every_match_with_cursors(base: str) -> None:
    instruments = ok(base, "/v2/instruments?limit=100")["items"]
    expected = reference_search(instruments, "usdt", None)
    first = search(base, {"text": "usdt", "limit": 4})
    assert len(expected) > 8 and first["total"] == len(expected) and first["next_cursor"] is not None
    seen, page = list(first["items"]), first
    while page["next_cursor"] is not None:
        page = ok(base, f"/v2/instruments/search/{first['search_id']}?cursor={page['next_cursor']}")
        assert page["search_id"] == first["search_id"] and len(page["items"]) <= 4
        seen += page["items"]
    assert seen == expected
    wide = ok(base, f"/v2/instruments/search/{first['search_id']}?limit=1000")
    assert wide["items"] == expected and wide["next_cursor"] is None
    other = search(base, {"text": "btc", "limit": 1})
    for path, symbol in [
        (f"?cursor={first['next_cursor']}", None),
        ("?cursor=forged", "INVALID_CURSOR"),
        ("?limit=1001", "LIMIT_OUT_OF_RANGE"),
    ]:
        if symbol is None:  # a cursor is bound to its search
            envelope(get(base + f"/v2/instruments/search/{other['search_id']}{path}"), 400, "INVALID_CURSOR")
        else:
            envelope(get(base + f"/v2/instruments/search/{first['search_id']}{path}"), 400, symbol)


def test_the_same_query_gets_the_same_search_id(base: str) -> None:
    first = search(base, {"text": "sol", "instrument_classes": ["SWAP", "SPOT"]})
    again = search(base, {"instrument_classes": ["SPOT", "SWAP", "SPOT"], "text": "sol", "limit": 100})
    assert first["search_id"] == again["search_id"]
    assert first["query"] == {
        "version": "spine.v2",
        "schema_id": "svc.search_query",
        "schema_version": 1,
        "text": "sol",
        "instrument_classes": ["SPOT", "SWAP"],
        "limit": 100,
    }


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b'{"text": ', "INVALID_JSON"),
        (b"{not json", "NON_STRING_KEY"),
        (b"", "INVALID_JSON"),
        (b'["btc"]', "must be a JSON object"),
        (b'{"text": "btc", "limit": 10.0}', "FLOAT_REFUSED"),
        (b'{"text": "btc", "text": "eth"}', "DUPLICATE_KEY"),
        ({"text": ""}, "$.text"),
        ({"text": "x" * 65}, "$.text"),
        ({"text": 5}, "$.text"),
        ({"text": "btc", "limit": 0}, "$.limit"),
        ({"text": "btc", "limit": "10"}, "$.limit"),
        ({"text": "btc", "instrument_classes": ["COIN"]}, "$.instrument_classes"),
        ({"limit": 5}, "text"),
    ],
)
def test_a_bad_search_body_is_invalid_body(base: str, body: object, words: str) -> None:
    text = envelope(post(base + "/v2/instruments/search", body), 400, "INVALID_BODY")
    assert text.startswith("POST /v2/instruments/search: ") and words in text, text


def test_a_search_body_is_sealed(base: str) -> None:
    text = envelope(
        post(base + "/v2/instruments/search", {"text": "btc", "venue": "SIM", "fuzzy": True}), 400, "UNKNOWN_BODY_KEYS"
    )
    assert text == (
        "POST /v2/instruments/search: unknown keys fuzzy, venue; allowed keys: text, instrument_classes, limit"
    )


def test_the_new_operations_are_served_and_described(base: str) -> None:
    registry = ok(base, "/v2/registry")
    by_id = {op["id"]: op for op in registry["operations"]}
    expected = {
        "spine.connection.get": ("QUERY", ["svc.connection_state"]),
        "spine.selection.get": ("QUERY", ["svc.selection_page", "svc.selection_row"]),
        "spine.selection.set": ("COMMAND", ["svc.selection_page", "svc.selection_row"]),
        "spine.selection.remove": ("COMMAND", ["svc.selection_page", "svc.selection_row"]),
        "spine.instruments.search": ("QUERY", ["svc.search_result", "svc.search_query", "svc.instrument_ref"]),
        "spine.instruments.search_result": ("QUERY", ["svc.search_result"]),
    }
    for op_id, (effect, schema_ids) in expected.items():
        op = by_id[op_id]
        # This host is public-readonly: its commands are DISABLED (they answer 403 here).
        availability = "DISABLED" if effect == "COMMAND" else "READY"
        assert (op["availability"], op["effect"], op["schema_ids"]) == (availability, effect, schema_ids), op
        assert op["requires_paper"] is False and op["requires_confirmation"] is False
    assert ok(base, "/v2/engine-pin")["instrument_search"] is True
    openapi = get(base + "/v2/openapi.json")[1]
    bodies = {
        (path, method): item["requestBody"]
        for path, methods in openapi["paths"].items()
        for method, item in methods.items()
        if "requestBody" in item
    }
    assert bodies.keys() == {
        ("/v2/selection", "post"),
        ("/v2/selection/remove", "post"),
        ("/v2/instruments/search", "post"),
    }
    for body in bodies.values():
        name = body["content"]["application/json"]["schema"]["$ref"].removeprefix("#/components/schemas/")
        assert openapi["components"]["schemas"][name]["additionalProperties"] is False


def test_a_body_past_the_cap_is_refused_unread(base: str) -> None:
    huge = b'{"text": "' + b"x" * (2 << 20) + b'"}'
    text = envelope(post(base + "/v2/instruments/search", huge), 400, "INVALID_BODY")
    assert "larger than 1048576 bytes" in text
    assert search(base, {"text": "btc"})["total"] > 0  # the node goes on serving


def _request(url: str, method: str) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, dict(error.headers), error.read()


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/v2/health", "application/json"),
        ("/v2/bars?instrument_id=BTCUSDT.SIM", "application/json"),
        ("/health", "application/json"),
        ("/v2/stream/bars", "text/event-stream"),
    ],
)
def test_head_answers_the_gets_status_and_headers_without_a_body(base: str, path: str, content_type: str) -> None:
    status, headers, body = _request(base + path, "HEAD")
    assert (status, headers["content-type"], body) == (200, content_type, b"")


def test_head_of_a_bad_query_is_the_gets_refusal_without_a_body(base: str) -> None:
    status, _, body = _request(base + "/v2/bars?instrument_id=BTCUSDT.SIM&limit=0", "HEAD")
    assert (status, body) == (400, b"")


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("PUT", "/v2/bars", "GET, HEAD"),
        ("DELETE", "/health", "GET, HEAD"),
        ("GET", "/v2/instruments/search", "POST"),
    ],
)
def test_a_405_names_the_allowed_methods_in_allow(base: str, method: str, path: str, allow: str) -> None:
    status, headers, body = _request(base + path, method)
    assert status == 405 and headers["allow"] == allow
    assert json.loads(body)["error"]["detail"].startswith("METHOD_NOT_ALLOWED: ")


def test_a_facts_cursor_is_bound_to_its_kind(base: str) -> None:
    page = ok(base, "/v2/facts?kind=mark_price&limit=1")
    assert page["next_cursor"] is not None, page
    ok(base, f"/v2/facts?kind=mark_price&limit=1&cursor={page['next_cursor']}")
    envelope(get(base + f"/v2/facts?kind=index_price&limit=1&cursor={page['next_cursor']}"), 400, "INVALID_CURSOR")


def _limited_routes(base: str) -> list[tuple[str, int]]:
    """Each GET route whose OpenAPI entry takes ``limit``, as a callable path, with its maximum."""
    fill = {"{kind}": "mark_price", "{id}": "BTCUSDT.SIM"}
    out = []
    for path, methods in get(base + "/v2/openapi.json")[1]["paths"].items():
        get_op = methods.get("get")
        limit = next((p for p in (get_op or {}).get("parameters", []) if p["name"] == "limit"), None)
        if limit is None or "200" not in get_op["responses"] or path.startswith("/v2/instruments/search/"):
            continue  # (a search's pages have their own test)
        for hole, value in fill.items():
            path = path.replace(hole, value)
        names = {p["name"] for p in get_op["parameters"]}
        if "bar_type" in names:
            path += "?instrument_id=BTCUSDT.SIM"
        if any(p["required"] and p["in"] == "query" for p in get_op["parameters"]):
            assert names >= {"kind"}, path
            path += "?kind=mark_price"
        out.append((path, limit["schema"]["maximum"]))
    return out


def test_the_openapi_limits_and_required_parameters_are_the_servers(base: str) -> None:
    routes = _limited_routes(base)
    assert len(routes) >= 8, routes
    for path, maximum in routes:
        join = "&" if "?" in path else "?"
        status, body = get(f"{base}{path}{join}limit={maximum}")
        assert status == 200, (path, maximum, body)
        status, body = get(f"{base}{path}{join}limit={maximum + 1}")
        assert status == 400 and body["error"]["detail"].startswith("LIMIT_OUT_OF_RANGE: "), (path, body)
    facts = get(base + "/v2/openapi.json")[1]["paths"]["/v2/facts"]["get"]
    assert [p["name"] for p in facts["parameters"] if p["required"]] == ["kind"]
    assert "503" in facts["responses"]


def test_every_schema_the_registry_names_is_published(base: str) -> None:
    published = {entry["schema_id"] for entry in ok(base, "/v2/schemas")["schemas"]}
    named = {s for op in ok(base, "/v2/registry")["operations"] if op["wire_version"] == "v2" for s in op["schema_ids"]}
    assert named <= published, sorted(named - published)
