"""A gateway in front of two nodes on two simulated venues (SIM, SIMB) and a screener over both,
all real processes on loopback: instruments and coverage merged across the nodes under the
gateway's cursor, each instrument's routes relayed byte for byte from its venue's node; one
node killed: its operations UNKNOWN, health degraded, the other node's routes still served;
and recovery when it returns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gateways import raw, relayed_unchanged, spawn_gateway
from nodes import START, free_port, get, node_env, post, running_node, spawn, stop, wait_for
from screeners import ok, spawn_screener

from reference.wire_validator import validate

END = "1740000000000000000"


def walk(url: str, path: str) -> list[dict[str, Any]]:
    page = ok(url + f"{path}?limit=13")
    items = list(page["items"])
    while page["next_cursor"] is not None:
        page = ok(url + f"{path}?limit=13&cursor={page['next_cursor']}")
        items += page["items"]
    return items


def test_two_venues_merged_relayed_and_one_lost_and_back(tmp_path: Path) -> None:
    port = free_port()
    config = tmp_path / "b" / "node.toml"
    config.parent.mkdir()
    config.write_text(
        f'node_id = "spine-simb"\nflush_secs = 0.5\nhydrate_minutes = 30\nport = {port}\n'
        f'[sim]\nstart_ns = {START}\nspeed = 600\nvenue_name = "SIMB"\n'
    )
    env = node_env(tmp_path / "b" / "data")
    b = f"http://127.0.0.1:{port}"
    (tmp_path / "a").mkdir()
    with running_node(tmp_path / "a", warm_bars=200) as a:
        node_b = spawn(config, env)
        screener = gateway = None
        try:
            wait_for(node_b, lambda: bool(get(b + "/v2/health")[1]["ready"]), "ready")
            screener, screener_url = spawn_screener(tmp_path / "screener", a, b)
            gateway, url = spawn_gateway(tmp_path / "gateway", [a, b], screener_url)
            wait_for(
                gateway,
                lambda: [u["venues"] for u in get(url + "/v2/status")[1]["upstreams"][:2]] == [["SIM"], ["SIMB"]],
                "both venues known",
            )

            # Merged under one cursor, node after node.
            assert walk(url, "/v2/instruments") == walk(a, "/v2/instruments") + walk(b, "/v2/instruments")
            assert len(walk(url, "/v2/coverage")) == len(walk(a, "/v2/coverage")) + len(walk(b, "/v2/coverage"))
            # Each instrument's routes from its venue's node, bytes unchanged.
            for node, iid in ((a, "BTCUSDT.SIM"), (b, "BTCUSDT.SIMB")):
                query = f"/v2/bars?instrument_id={iid}&limit=100&end={END}"
                assert relayed_unchanged(url, node, query)
                assert raw(url + f"/v2/coverage/{iid}")[0] == 200

            # A search asks both nodes: their matches in node order under the gateway's id.
            code, first = post(url + "/v2/instruments/search", {"text": "BTC", "limit": 3})
            assert code == 200, first
            validate(first)
            found, page = list(first["items"]), first
            while page["next_cursor"] is not None:
                page = ok(url + f"/v2/instruments/search/{first['search_id']}?cursor={page['next_cursor']}&limit=3")
                assert page["search_id"] == first["search_id"]
                found += page["items"]
            per_node = [post(node + "/v2/instruments/search", {"text": "BTC", "limit": 1000})[1] for node in (a, b)]
            assert found == per_node[0]["items"] + per_node[1]["items"]
            assert first["total"] == per_node[0]["total"] + per_node[1]["total"] == len(found)
            assert {i["instrument_id"].rsplit(".", 1)[1] for i in found} == {"SIM", "SIMB"}
            assert get(url + "/v2/instruments/search/" + "0" * 64)[0] == 404
            assert get(url + "/v2/instruments/search/nope")[0] == 400

            stop(node_b)
            wait_for(gateway, lambda: get(url + "/v2/health")[1]["degraded"] is True, "degraded")
            health = ok(url + "/v2/health")
            assert health["ready"] and health["degraded_reasons"] == ["NODE_UNREACHABLE"]
            availability = {e["id"]: e["availability"] for e in ok(url + "/v2/registry")["operations"]}
            assert availability["spine.bars.list"] == "UNKNOWN"
            assert availability["spine.screener.rows"] == "READY"
            status = ok(url + "/v2/status")["upstreams"]
            assert status[1]["reachable"] is False
            assert status[1]["last_error"].startswith("UPSTREAM_UNAVAILABLE: node-2: ")
            assert b not in str(status)  # a public-readonly gateway names upstreams, never their addresses
            query = f"/v2/bars?instrument_id=BTCUSDT.SIM&limit=100&end={END}"
            assert relayed_unchanged(url, a, query)
            assert walk(url, "/v2/instruments") == walk(a, "/v2/instruments")  # b's part is missing
            code, refusal = get(url + "/v2/bars?instrument_id=BTCUSDT.SIMB")
            assert code == 502 and refusal["error"]["detail"] == (
                "UPSTREAM_UNAVAILABLE: node-2: GET /v2/bars: connection refused or unreachable"
            ), refusal

            node_b = spawn(config, env)
            wait_for(gateway, lambda: get(url + "/v2/health")[1]["degraded"] is False, "recovered")
            availability = {e["id"]: e["availability"] for e in ok(url + "/v2/registry")["operations"]}
            assert availability["spine.bars.list"] == "READY"
            assert raw(url + "/v2/bars?instrument_id=BTCUSDT.SIMB&limit=5")[0] == 200
        finally:
            for process in (gateway, screener, node_b):
                if process is not None:
                    stop(process)


def test_roster_changes_reach_each_venues_node_in_private_operator(tmp_path: Path) -> None:
    manifests = {venue: tmp_path / f"{venue.lower()}.txt" for venue in ("SIM", "SIMB")}
    for path in manifests.values():
        path.write_text("")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    operator = {"SPINE_DEPLOYMENT_MODE": "private-operator"}
    with (
        running_node(tmp_path / "a", f'manifest = "{manifests["SIM"]}"\n', warm_bars=0, **operator) as a,
        running_node(
            tmp_path / "b", f'manifest = "{manifests["SIMB"]}"\n', warm_bars=0, sim='venue_name = "SIMB"\n', **operator
        ) as b,
    ):
        gateway, url = spawn_gateway(tmp_path / "gateway", [a, b], f"http://127.0.0.1:{free_port()}", **operator)
        try:
            wait_for(
                gateway,
                lambda: [u["venues"] for u in get(url + "/v2/status")[1]["upstreams"][:2]] == [["SIM"], ["SIMB"]],
                "both venues known",
            )
            assert ok(url + "/v2/health")["deployment_mode"] == "private-operator"
            code, refusal = post(url + "/v2/selection", {"instrument_ids": ["BTCUSDT.SIM", "BTCUSDT.NOWHERE"]})
            assert code == 404 and "'NOWHERE'" in refusal["error"]["detail"]
            assert manifests["SIM"].read_text() == ""  # refused before any node was asked
            code, page = post(url + "/v2/selection", {"instrument_ids": ["ETHUSDT.SIMB", "BTCUSDT.SIM"]})
            assert code == 200, page
            assert [row["instrument_id"] for row in page["items"]] == ["BTCUSDT.SIM", "ETHUSDT.SIMB"]
            assert "BTCUSDT.SIM" in manifests["SIM"].read_text() and "ETHUSDT.SIMB" in manifests["SIMB"].read_text()
            selected = {row["instrument_id"] for row in walk(url, "/v2/selection") if row["manifest"]}
            assert {"BTCUSDT.SIM", "ETHUSDT.SIMB"} <= selected
        finally:
            stop(gateway)
