"""Ingest throughput: trades through the ingestion actor (projection to svc.trade_tick, the
framework's INTERNAL bar aggregator, SSE encoding) into the hub with 100 idle subscribers,
against the same actor path with the hand-written baseline fan-out (one asyncio.Queue per
subscriber, oldest dropped when full) in its place. The actor is registered in a built (not
started) TradingNode, and its handler is called directly with pre-built TradeTicks, so the
figure is the ingestion path itself, not the venue or the data engine.

Smoke mode (CI): --benchmark-disable.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from nautilus_trader.config import LiveExecEngineConfig, LoggingConfig, TradingNodeConfig
from nautilus_trader.live.node import TradingNode
from nautilus_trader.model.data import TradeTick
from nautilus_trader.model.enums import AggressorSide
from nautilus_trader.model.identifiers import TradeId
from nautilus_trader.model.objects import Price, Quantity
from pytest_benchmark.fixture import BenchmarkFixture

from benches.bench_fanout import QueueFanOut
from spine.fanout import FanOut
from spine.node.actor import IngestionActor
from spine.node.persist.series_book import SeriesBook
from spine.node.sim.universe import SimUniverseConfig, make_instruments

TRADES = 20_000
IDLE = 100
START = 29_000_000 * 60 * 10**9


def _trades(instruments: list[Any]) -> list[TradeTick]:
    out = []
    for k in range(TRADES):
        instrument = instruments[k % len(instruments)]
        ts = START + k * 50_000_000  # 20 trades a second across the universe: minutes close
        price = Price.from_raw(
            (1_000_000 + k % 97) * 10 ** (16 - instrument.price_precision), instrument.price_precision
        )
        out.append(
            TradeTick(instrument.id, price, Quantity.from_str("1.000"), AggressorSide.BUYER, TradeId(str(k)), ts, ts)
        )
    return out


def _actor(hub: Any, loop: asyncio.AbstractEventLoop) -> tuple[IngestionActor, TradingNode]:
    node = TradingNode(
        TradingNodeConfig(
            trader_id="BENCH-001",
            logging=LoggingConfig(log_level="ERROR"),
            exec_engine=LiveExecEngineConfig(reconciliation=False),
        ),
        loop=loop,
    )
    actor = IngestionActor(hub=hub, book=SeriesBook())
    node.trader.add_actor(actor)
    node.build()
    for instrument in make_instruments(SimUniverseConfig(spot=12, perpetuals=0, option_expiries=0)):
        node.cache.add_instrument(instrument)
    actor.on_start()
    return actor, node


@pytest.mark.benchmark(group="ingest-20k-trades-100-idle")
@pytest.mark.parametrize("rival", ["spine", "asyncio.Queue"])
def test_ingest(benchmark: BenchmarkFixture, rival: str) -> None:
    loop = asyncio.new_event_loop()  # asyncio.Queue and the node bind to it
    asyncio.set_event_loop(loop)
    hub: Any = FanOut() if rival == "spine" else QueueFanOut()
    for _ in range(IDLE):
        hub.subscribe()
    actor, node = _actor(hub, loop)
    trades = _trades(list(actor.cache.instruments()))
    rounds = iter(range(10**6))

    def ingest() -> None:
        shift = next(rounds) * TRADES * 50_000_000  # every round continues in time
        for tick in trades:
            actor.on_trade_tick(
                TradeTick(
                    tick.instrument_id,
                    tick.price,
                    tick.size,
                    tick.aggressor_side,
                    tick.trade_id,
                    tick.ts_event + shift,
                    tick.ts_init + shift,
                )
            )

    try:
        benchmark.pedantic(ingest, rounds=5, iterations=1)
        assert actor.counters.trades >= TRADES
        assert actor.counters.bars_accepted["INTERNAL"] > 0
    finally:
        node.kernel.dispose()
        node.kernel.executor.shutdown(wait=False, cancel_futures=True)
        asyncio.set_event_loop(None)
        loop.close()
