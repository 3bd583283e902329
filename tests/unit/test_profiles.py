"""Venue profiles build a node offline: nautilus' Binance and Bybit adapters are configured
and their clients constructed by ``node.build()`` without any network traffic (clients
connect only when a node starts, which these tests never do)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import msgspec
import pytest
from nautilus_trader.model.identifiers import ClientId, Venue

from spine.node.config import ConfigError, NodeConfig
from spine.node.profiles import data_client
from spine.node.service import VenueNode


@pytest.mark.parametrize(("venue", "client_name"), [("sim", "SIM"), ("binance", "BINANCE"), ("bybit", "BYBIT")])
def test_each_profile_builds_a_market_data_node_offline(
    tmp_path: Path, venue: str, client_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # nautilus' adapters read keys at construction even for public data: placeholders suffice
    # offline, since nothing connects.
    for variable in ("BINANCE_API_KEY", "BINANCE_API_SECRET", "BYBIT_API_KEY", "BYBIT_API_SECRET"):
        monkeypatch.setenv(variable, "offline-test")
    config = msgspec.convert({"venue": venue, "data_dir": str(tmp_path)}, NodeConfig)
    name, _, factory = data_client(config)
    assert name == client_name and factory.__name__.endswith("Factory")
    loop = asyncio.new_event_loop()
    try:
        node = VenueNode(config).build(loop)
        clients = node.kernel.data_engine.registered_clients
        assert [str(c) for c in clients] == [client_name]
        assert node.kernel.exec_engine.registered_clients == []  # no execution client
        node.kernel.dispose()
        node.kernel.executor.shutdown(wait=False, cancel_futures=True)
    finally:
        asyncio.set_event_loop(None)
        loop.close()


def test_a_named_sim_venue_names_its_client_and_every_instrument(tmp_path: Path) -> None:
    config = msgspec.convert({"data_dir": str(tmp_path), "sim": {"venue_name": "SIMB"}}, NodeConfig)
    name, client_config, _ = data_client(config)
    assert name == "SIMB" and client_config.venue_name == "SIMB"
    loop = asyncio.new_event_loop()
    try:
        venue = VenueNode(config)
        node = venue.build(loop)
        assert [str(c) for c in node.kernel.data_engine.registered_clients] == ["SIMB"]
        (client,) = venue.clients
        assert (client.id, client.venue) == (ClientId("SIMB"), Venue("SIMB"))
        assert {i.id.venue.value for i in client._instruments} == {"SIMB"}
        node.kernel.dispose()
        node.kernel.executor.shutdown(wait=False, cancel_futures=True)
    finally:
        asyncio.set_event_loop(None)
        loop.close()


@pytest.mark.parametrize(
    ("stored", "configured"), [("SIM", {"sim": {"venue_name": "SIMB"}}), ("SIMB", {}), ("SIM", {"venue": "binance"})]
)
def test_a_data_directory_of_another_venue_is_refused_naming_both(
    tmp_path: Path, stored: str, configured: dict[str, object]
) -> None:
    (tmp_path / "catalog" / "external" / "data" / "bar" / f"BTCUSDT.{stored}-1-MINUTE-LAST-EXTERNAL").mkdir(
        parents=True
    )
    config = msgspec.convert({"data_dir": str(tmp_path), **configured}, NodeConfig)
    with pytest.raises(ConfigError, match=rf"holds series of venue {stored}; this node's venue is {config.venue_name}"):
        VenueNode(config)
    assert not (tmp_path / "series").exists()  # refused before anything is written
