"""Venue profiles build a node offline: nautilus' Binance and Bybit adapters are configured
and their clients constructed by ``node.build()`` without any network traffic (clients
connect only when a node starts, which these tests never do)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import msgspec
import pytest

from spine.node.config import NodeConfig
from spine.node.profiles import data_client
from spine.node.runner import VenueNode


@pytest.mark.parametrize(("venue", "client_name"), [("sim", "SIM"), ("binance", "BINANCE"), ("bybit", "BYBIT")])
def test_each_profile_builds_a_market_data_node_offline(tmp_path: Path, venue: str, client_name: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
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
