"""A simulated venue under another name (``sim.venue_name``), over real ``spine node`` processes:
every instrument id, bar page, stream and identity document names it and nothing answers for
``SIM``; two nodes on two names run side by side (the gateway's setting), and a data directory
written under one name is refused under another."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from nodes import envelope, free_port, get, node_env, ok, running_node, running_nodes, spawn, sse


@pytest.fixture(scope="module")
def simb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_node(tmp_path_factory.mktemp("simb"), sim='venue_name = "SIMB"\n') as url:
        yield url


def instrument_ids(base: str) -> list[str]:
    seen, path = [], "/v2/instruments?limit=20"
    while True:
        page = ok(base, path)
        seen += [item["instrument_id"] for item in page["items"]]
        if page["next_cursor"] is None:
            return seen
        path = f"/v2/instruments?limit=20&cursor={page['next_cursor']}"


def test_every_instrument_id_names_the_configured_venue(simb: str) -> None:
    ids = instrument_ids(simb)
    assert len(ids) == 48 and all(i.endswith(".SIMB") for i in ids), ids
    assert {item["venue"] for item in ok(simb, "/v2/instruments")["items"]} == {"SIMB"}


def test_bars_of_the_named_venue_are_served_and_sim_is_not_found(simb: str) -> None:
    page = ok(simb, "/v2/bars?instrument_id=BTCUSDT.SIMB&limit=3")
    assert len(page["bars"]) == 3 and page["coverage"]["instrument_id"] == "BTCUSDT.SIMB"
    assert ok(simb, "/v2/bars?bar_type=BTCUSDT.SIMB-1-MINUTE-LAST-INTERNAL&limit=1")["bars"]
    envelope(get(simb + "/v2/bars?instrument_id=BTCUSDT.SIM"), 404, "NOT_FOUND")
    envelope(get(simb + "/v2/coverage/BTCUSDT.SIM"), 404, "NOT_FOUND")


def test_the_bar_stream_delivers_the_named_venues_bars(simb: str) -> None:
    bars = [
        doc
        for name, doc in sse(simb + "/v2/stream/bars?channel=EXTERNAL&resolution=1m", 4, timeout=30)
        if name == "bar"
    ]
    assert bars and all(doc["instrument_id"].endswith(".SIMB") for doc in bars), bars


def test_identity_documents_name_the_venue_and_its_client(simb: str) -> None:
    assert ok(simb, "/v2/health")["ready"] is True
    pin = ok(simb, "/v2/engine-pin")
    assert (pin["integration"], pin["venue"], pin["history"]) == ("sim", "SIMB", True)
    connection = ok(simb, "/v2/connection")
    assert connection["venue"] == "SIMB" and connection["data_clients"] == [{"client_id": "SIMB", "connected": True}]
    assert [c["venue"] for c in ok(simb, "/v2/status")["connectivity"]] == ["SIMB"]
    assert get(simb + "/provenance")[1]["venue"] == "SIMB"


def test_two_nodes_run_two_venues_and_a_data_directory_keeps_its_venue(tmp_path: Path) -> None:
    with running_nodes(tmp_path, ("SIM", "SIMB"), warm_bars=100) as (sim, simb):
        assert ok(sim, "/v2/health")["ready"] and ok(simb, "/v2/health")["ready"]
        ids = instrument_ids(sim), instrument_ids(simb)
        assert all(i.endswith(".SIM") for i in ids[0]) and all(i.endswith(".SIMB") for i in ids[1])
        assert not set(ids[0]) & set(ids[1]) and len(ids[0]) == len(ids[1]) == 48
        assert ok(sim, "/v2/registry")["node_id"] != ok(simb, "/v2/registry")["node_id"]
    # The SIMB node's data directory, now under the name SIM: refused before anything is written.
    config = tmp_path / "renamed.toml"
    config.write_text(f'port = {free_port()}\n[sim]\nvenue_name = "SIM"\n')
    process = spawn(config, node_env(tmp_path / "simb" / "data"))
    try:
        _, err = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    assert process.returncode == 2, err
    assert "holds series of venue SIMB; this node's venue is SIM" in err, err
