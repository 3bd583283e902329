"""An in-process NautilusTrader node on the simulated venue, for the tests that drive the
framework directly (no ``spine node`` process): what the node's runner configures, minus
the catalog and HTTP."""

from __future__ import annotations

import asyncio

from nautilus_trader.config import (
    InstrumentProviderConfig,
    LiveDataEngineConfig,
    LiveExecEngineConfig,
    LoggingConfig,
    TradingNodeConfig,
)
from nautilus_trader.live.node import TradingNode

from spine.node.sim.client import SimDataClientConfig


def sim_trading_node(*, speed: float, start_ns: int) -> TradingNode:
    """A node on the running loop with the SIM data client configured at ``speed`` from
    ``start_ns``; the caller adds its actors and the client factory, then builds it."""
    config = TradingNodeConfig(
        trader_id="SPINE-001",
        logging=LoggingConfig(log_level="ERROR"),
        exec_engine=LiveExecEngineConfig(reconciliation=False),
        data_engine=LiveDataEngineConfig(time_bars_build_with_no_updates=False, time_bars_skip_first_non_full_bar=True),
        data_clients={
            "SIM": SimDataClientConfig(
                speed=speed, start_ns=start_ns, instrument_provider=InstrumentProviderConfig(load_all=True)
            )
        },
        timeout_connection=5.0,
        timeout_post_stop=0.05,
        timeout_disconnection=1.0,
        timeout_portfolio=1.0,
    )
    return TradingNode(config=config, loop=asyncio.get_running_loop())
