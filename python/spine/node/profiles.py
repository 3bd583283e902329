"""Venue profiles: the nautilus data client (config and factory) a node is built with. ``sim``
is the embedded default; ``binance`` and ``bybit`` are nautilus' own adapters, configured
from the environment (``BINANCE_API_KEY``/``_SECRET``, ``BYBIT_API_KEY``/``_SECRET``: the
adapters read them when their clients are built, even for public market data); ``catalog``
serves one venue's imported bars from a ``spine import`` catalog (:mod:`spine.node.catalog_venue`).
Building a node from a profile touches no network: clients connect only when the node starts.
"""

from __future__ import annotations

import os
from typing import Any

import msgspec
from nautilus_trader.config import InstrumentProviderConfig

from spine.node.config import NodeConfig
from spine.node.sim.client import SimDataClientConfig, SimDataClientFactory

__all__ = ["data_client"]


def _sim(config: NodeConfig) -> tuple[str, Any, type]:
    s = config.sim
    # Every [sim] setting is a client setting of the same name (the client's history is None when empty).
    client = SimDataClientConfig(
        **{**msgspec.structs.asdict(s), "history": dict(s.history) or None},
        instrument_provider=InstrumentProviderConfig(load_all=True),
    )
    return s.venue_name, client, SimDataClientFactory


def _binance(config: NodeConfig) -> tuple[str, Any, type]:
    from nautilus_trader.adapters.binance import (
        BinanceAccountType,
        BinanceDataClientConfig,
        BinanceLiveDataClientFactory,
    )

    client = BinanceDataClientConfig(
        api_key=os.environ.get("BINANCE_API_KEY"),
        api_secret=os.environ.get("BINANCE_API_SECRET"),
        account_type=BinanceAccountType(os.environ.get("SPINE_BINANCE_ACCOUNT", "SPOT")),
        testnet=os.environ.get("SPINE_BINANCE_TESTNET", "") == "1",
        instrument_provider=InstrumentProviderConfig(load_all=True),
    )
    return "BINANCE", client, BinanceLiveDataClientFactory


def _bybit(config: NodeConfig) -> tuple[str, Any, type]:
    from nautilus_trader.adapters.bybit import BybitDataClientConfig, BybitLiveDataClientFactory, BybitProductType

    products = os.environ.get("SPINE_BYBIT_PRODUCTS", "SPOT,LINEAR").split(",")
    client = BybitDataClientConfig(
        api_key=os.environ.get("BYBIT_API_KEY"),
        api_secret=os.environ.get("BYBIT_API_SECRET"),
        product_types=[BybitProductType[p.strip().upper()] for p in products],
        testnet=os.environ.get("SPINE_BYBIT_TESTNET", "") == "1",
        instrument_provider=InstrumentProviderConfig(load_all=True),
    )
    return "BYBIT", client, BybitLiveDataClientFactory


def _catalog(config: NodeConfig) -> tuple[str, Any, type]:
    from spine.node.catalog_venue import CatalogDataClientConfig, CatalogDataClientFactory

    venue = config.venue_name
    client = CatalogDataClientConfig(
        venue_name=venue, path=config.catalog.path, instrument_provider=InstrumentProviderConfig(load_all=True)
    )
    return venue, client, CatalogDataClientFactory


def data_client(config: NodeConfig) -> tuple[str, Any, type]:
    """``(client name, client config, factory class)`` for the configured venue."""
    return {"sim": _sim, "binance": _binance, "bybit": _bybit, "catalog": _catalog}[config.venue](config)
