"""The NautilusTrader side of a venue node: a ``TradingNode`` built around the ingestion actor
and the venue's data client (market data only, no execution or risk client), with the sandbox
execution client besides on a paper node; and the venue configuration the data client is
built from."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import msgspec
from nautilus_trader.config import LiveDataEngineConfig, LiveExecEngineConfig, LoggingConfig, TradingNodeConfig
from nautilus_trader.live.node import TradingNode

from spine.node.actor import IngestionActor
from spine.node.config import NodeConfig
from spine.node.paper.sandbox import controller, execution_client, route_bars
from spine.node.persist.series_book import SeriesBook
from spine.node.profiles import data_client

__all__ = ["trading_node", "venue_config"]

MINUTE_NS = 60_000_000_000


def venue_config(config: NodeConfig, book: SeriesBook) -> NodeConfig:
    """The configuration the venue client is built from: an accelerated simulated venue
    without a configured start carries on from the newest reloaded close (its clock runs
    ahead of the wall, so starting from the wall again would replay minutes the series
    already holds, every bar a duplicate); otherwise as configured."""
    if config.venue != "sim" or config.sim.start_ns is not None:
        return config
    closes = [s.resume_hint()["newest_ts_event"] for _, _, s in book.held()]
    newest = max((c for c in closes if c is not None), default=0)
    wall = time.time_ns() // MINUTE_NS * MINUTE_NS
    if newest <= wall:
        return config
    return msgspec.structs.replace(config, sim=msgspec.structs.replace(config.sim, start_ns=newest))


def trading_node(
    config: NodeConfig,
    venue: NodeConfig,
    actor: IngestionActor,
    clients: list[Any],
    loop: asyncio.AbstractEventLoop,
    executions: list[Any] | None = None,
    operator: Any | None = None,
) -> TradingNode:
    """The built ``TradingNode`` of ``config`` running ``actor``, its data client built from
    ``venue``; each data client it builds is appended to ``clients`` (the node reads its
    history), and on a paper node the sandbox execution client to ``executions``, with the
    ``operator``'s strategy placing the operator's paper orders."""
    name, client_config, factory = data_client(venue)
    sink = executions if config.sandbox.enabled else None
    paper = sink is not None
    exec_config, exec_factory = execution_client(name, config.sandbox, sink) if sink is not None else (None, None)
    node_config = TradingNodeConfig(
        trader_id=f"SPINE-{abs(hash(config.node_id)) % 1000:03d}",
        logging=LoggingConfig(log_level=config.log_level),
        exec_engine=LiveExecEngineConfig(reconciliation=False),
        # The spec's bar rules for any bar the engine itself aggregates: no flat bar for a
        # minute with no trades, no partial first bar.
        data_engine=LiveDataEngineConfig(time_bars_build_with_no_updates=False, time_bars_skip_first_non_full_bar=True),
        data_clients={name: client_config},
        exec_clients={name: exec_config} if paper else {},
        controller=controller() if paper else None,
        timeout_connection=10.0,
        timeout_post_stop=0.05,
        timeout_disconnection=2.0,
        timeout_portfolio=1.0,
    )
    node = TradingNode(config=node_config, loop=loop)
    node.trader.add_actor(actor)
    if paper and operator is not None:
        node.trader.add_strategy(operator)
    node.add_data_client_factory(name, _capturing(factory, clients))
    if paper:
        node.add_exec_client_factory(name, exec_factory)
    node.build()
    for client in executions or ():
        route_bars(node.kernel.msgbus, name, client)
    return node


def _capturing(factory: type, sink: list[Any]) -> type:
    """The venue's factory, keeping each client it builds."""

    class Capturing(factory):
        @staticmethod
        def create(**kwargs: Any) -> Any:
            client = factory.create(**kwargs)  # type: ignore[attr-defined]
            sink.append(client)
            return client

    return Capturing
