"""The framework's bar aggregator under its defaults and under the node's settings: by
default NautilusTrader emits a flat bar for a minute with no trades and a partial first bar;
the node's configuration (no updates -> no bar, skip the first partial bar) emits neither."""

from __future__ import annotations

from typing import Any

from nautilus_trader.common.component import TestClock
from nautilus_trader.data.aggregation import TimeBarAggregator
from nautilus_trader.model.data import BarType, TradeTick
from nautilus_trader.model.enums import AggressorSide
from nautilus_trader.model.identifiers import TradeId
from nautilus_trader.model.objects import Price, Quantity

from spine.node.sim.universe import make_instruments

M = 60 * 10**9
T0 = 29_000_000 * M


def aggregate(*, build_with_no_updates: bool, skip_first_non_full_bar: bool) -> list[Any]:
    instrument = make_instruments()[0]
    bars: list[Any] = []
    clock = TestClock()
    clock.set_time(T0 + 30 * 10**9)  # started mid-minute
    aggregator = TimeBarAggregator(
        instrument,
        BarType.from_str(f"{instrument.id}-1-MINUTE-LAST-INTERNAL"),
        bars.append,
        clock,
        build_with_no_updates=build_with_no_updates,
        skip_first_non_full_bar=skip_first_non_full_bar,
    )

    def trade(ts: int, price: str) -> None:
        for event in clock.advance_time(ts):
            event.handle()
        aggregator.handle_trade_tick(
            TradeTick(
                instrument.id,
                Price.from_str(price),
                Quantity.from_str("1.000"),
                AggressorSide.BUYER,
                TradeId(str(ts)),
                ts,
                ts,
            )
        )

    trade(T0 + 40 * 10**9, "100.0")  # the partial first minute
    trade(T0 + M + 5 * 10**9, "101.0")  # minute 2
    trade(T0 + 3 * M + 10 * 10**9, "103.0")  # minute 3 has no trade; minute 4 does
    for event in clock.advance_time(T0 + 4 * M):
        event.handle()
    return [((b.ts_event - T0) // M, str(b.close), str(b.volume)) for b in bars]


def test_nautilus_defaults_emit_a_partial_first_bar_and_a_flat_bar_for_a_quiet_minute() -> None:
    assert aggregate(build_with_no_updates=True, skip_first_non_full_bar=False) == [
        (1, "100.0", "1.000"),
        (2, "101.0", "1.000"),
        (3, "101.0", "0.000"),
        (4, "103.0", "1.000"),
    ]


def test_the_node_settings_emit_only_whole_minutes_that_had_trades() -> None:
    assert aggregate(build_with_no_updates=False, skip_first_non_full_bar=True) == [
        (2, "101.0", "1.000"),
        (4, "103.0", "1.000"),
    ]
