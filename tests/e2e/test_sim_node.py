"""The simulated venue inside a real NautilusTrader live node, in accelerated time: every kind
of event reaches an actor through the framework, and history requests are answered."""

from __future__ import annotations

import asyncio
from typing import Any

import pandas as pd
from framework import sim_trading_node
from nautilus_trader.common.actor import Actor
from nautilus_trader.common.config import ActorConfig
from nautilus_trader.model.data import BarType, DataType
from nautilus_trader.model.identifiers import ClientId

from spine.node.sim.client import SimDataClientFactory
from spine.node.sim.kinds import Liquidation, OptionGreeks

START = 29_000_000 * 60 * 10**9


class Watch(Actor):
    def __init__(self) -> None:
        super().__init__(ActorConfig(component_id="WATCH"))
        self.counts: dict[str, int] = {}
        self.history: list[Any] = []

    def on_start(self) -> None:
        for inst in self.cache.instruments():
            self.subscribe_trade_ticks(inst.id)
            self.subscribe_quote_ticks(inst.id)
            self.subscribe_bars(BarType.from_str(f"{inst.id}-1-MINUTE-LAST-EXTERNAL"))
            self.subscribe_instrument_status(inst.id)
            if str(inst.id).endswith("-PERP.SIM"):
                self.subscribe_mark_prices(inst.id)
                self.subscribe_index_prices(inst.id)
                self.subscribe_funding_rates(inst.id)
        self.subscribe_data(DataType(OptionGreeks), client_id=ClientId("SIM"))
        self.subscribe_data(DataType(Liquidation), client_id=ClientId("SIM"))
        self.request_bars(
            BarType.from_str("BTCUSDT.SIM-1-MINUTE-LAST-EXTERNAL"),
            start=pd.Timestamp(START - 30 * 60 * 10**9, unit="ns", tz="UTC"),
            end=pd.Timestamp(START, unit="ns", tz="UTC"),
        )

    def on_stop(self) -> None:
        pass

    def _count(self, kind: str) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1

    def on_trade_tick(self, tick: Any) -> None:
        self._count("trade")

    def on_quote_tick(self, tick: Any) -> None:
        self._count("quote")

    def on_bar(self, bar: Any) -> None:
        self._count("bar")

    def on_historical_data(self, data: Any) -> None:
        self.history.append(data)

    def on_mark_price(self, update: Any) -> None:
        self._count("mark_price")

    def on_index_price(self, update: Any) -> None:
        self._count("index_price")

    def on_funding_rate(self, update: Any) -> None:
        self._count("funding_rate")

    def on_data(self, data: Any) -> None:
        self._count(type(data).__name__)


async def run_node(seconds: float) -> Watch:
    node = sim_trading_node(speed=600.0, start_ns=START)
    watch = Watch()
    node.trader.add_actor(watch)
    node.add_data_client_factory("SIM", SimDataClientFactory)
    node.build()
    task = asyncio.create_task(node.run_async())
    try:
        for _ in range(500):
            if node.trader.is_running:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(seconds)
    finally:
        await node.stop_async()
        await task
        node.kernel.dispose()
    return watch


def test_every_kind_of_event_reaches_an_actor_in_accelerated_time() -> None:
    watch = asyncio.run(run_node(1.5))
    # 1.5 s at 600x is 15 venue minutes: candles every minute for each of 48 instruments.
    for kind in ("trade", "quote", "bar", "mark_price", "index_price", "funding_rate", "OptionGreeks"):
        assert watch.counts.get(kind, 0) > 0, (kind, watch.counts)
    assert watch.counts["bar"] >= 48 * 5
    assert len(watch.history) >= 25  # 30 minutes of history, a few candles skipped at most
