"""The simulated venue's market, universe and history endpoint: deterministic under a seed,
quiet minutes with no trades, candles that agree with the trades, and every history outcome."""

from __future__ import annotations

import pytest

from spine.node.sim.history import HistoryPlan
from spine.node.sim.market import MINUTE_NS, Profile, SimMarket
from spine.node.sim.universe import SimUniverseConfig, make_instruments

T0 = 29_000_000 * MINUTE_NS
PROFILES = [Profile(60_000, 1, 3, 8.0), Profile(3_000, 1, 2, 0.3)]


def test_one_seed_gives_one_market_and_another_seed_another() -> None:
    a, b, c = SimMarket(PROFILES, seed=1), SimMarket(PROFILES, seed=1), SimMarket(PROFILES, seed=2)
    ends = [T0 + k * MINUTE_NS for k in range(1, 50)]
    assert [a.minute(0, e) for e in ends] == [b.minute(0, e) for e in ends]
    assert [a.minute(0, e) for e in ends] != [c.minute(0, e) for e in ends]


def test_candles_agree_with_trades_and_quiet_minutes_have_no_trades() -> None:
    market = SimMarket(PROFILES, seed=3, candle_skip=0.0)
    quiet = 0
    for k in range(1, 400):
        minute = market.minute(1, T0 + k * MINUTE_NS)
        candle = minute.candle
        assert candle is not None and candle.ts_event == minute.end
        if not minute.trades:
            quiet += 1
            assert candle.volume == 0 and candle.open == candle.high == candle.low == candle.close
            continue
        prices = [t[1] for t in minute.trades]
        assert (candle.open, candle.high, candle.low, candle.close) == (prices[0], max(prices), min(prices), prices[-1])
        assert candle.volume == sum(t[2] for t in minute.trades)
        assert all(minute.end - MINUTE_NS < t[0] < minute.end for t in minute.trades)
        assert [t[0] for t in minute.trades] == sorted(t[0] for t in minute.trades)
    assert 0 < quiet < 399


def test_the_candle_feed_skips_some_minutes() -> None:
    market = SimMarket(PROFILES, seed=4, candle_skip=0.2)
    skipped = sum(market.minute(0, T0 + k * MINUTE_NS).candle is None for k in range(1, 500))
    assert 50 < skipped < 150


def test_the_default_universe_has_spot_perpetuals_and_an_option_chain() -> None:
    instruments = make_instruments()
    names = [str(i.id) for i in instruments]
    assert len(instruments) == 48 and len(set(names)) == 48
    assert sum(n.endswith("-PERP.SIM") for n in names) == 12
    options = [i for i in instruments if type(i).__name__ == "CryptoOption"]
    assert len(options) == 24 and {o.option_kind.name for o in options} == {"CALL", "PUT"}
    with pytest.raises(ValueError, match="spot=13"):
        SimUniverseConfig(spot=13)


def test_history_answers_each_planned_outcome() -> None:
    instruments = make_instruments(SimUniverseConfig(spot=4, perpetuals=0, option_expiries=0))
    market = SimMarket([Profile(100, 2, 3, 5.0)] * 4, seed=5)
    ids = [str(i.id) for i in instruments]
    plan = HistoryPlan(market, instruments, {ids[1]: "no_history", ids[2]: "transient:2", ids[3]: "failed"})
    got = plan.fetch(ids[0], T0, T0 + 30 * MINUTE_NS)
    assert got.outcome == "history"
    assert got.candles == market.candles(0, T0, T0 + 30 * MINUTE_NS)
    assert [c.ts_event for c in got.candles][-1] <= T0 + 30 * MINUTE_NS
    assert plan.fetch(ids[1], T0, T0 + MINUTE_NS).outcome == "no_history"
    assert [plan.fetch(ids[2], T0, T0 + MINUTE_NS).outcome for _ in range(3)] == ["transient", "transient", "history"]
    failed = plan.fetch(ids[3], T0, T0 + MINUTE_NS)
    assert failed.outcome == "failed" and failed.error
    with pytest.raises(ValueError, match="not in the SIM universe"):
        HistoryPlan(market, instruments, {"NOPE.SIM": "failed"})
    with pytest.raises(ValueError, match="allowed: history"):
        HistoryPlan(market, instruments, {ids[0]: "sometimes"})


def test_the_option_chain_lists_the_expiries_after_the_venues_start() -> None:
    from spine.node.sim.universe import DAY_NS

    base = SimUniverseConfig(spot=0, perpetuals=0, option_expiries=2, option_strikes=1)
    period = base.expiry_days * DAY_NS
    for start in (base.epoch_ns, base.epoch_ns + 1, base.epoch_ns + 10 * period + 5, base.epoch_ns + 11 * period):
        config = SimUniverseConfig(spot=0, perpetuals=0, option_expiries=2, option_strikes=1, start_ns=start)
        options = make_instruments(config)
        expiries = sorted({o.expiration_ns for o in options})
        assert len(expiries) == 2 and start < expiries[0] <= start + period and expiries[1] == expiries[0] + period
        assert (expiries[0] - base.epoch_ns) % period == 0  # on the grid
        assert sorted(str(o.id) for o in options) == sorted(str(o.id) for o in make_instruments(base))  # same ids


def test_a_named_venue_lists_the_same_universe_under_its_own_name() -> None:
    default = make_instruments(SimUniverseConfig(start_ns=T0))
    named = make_instruments(SimUniverseConfig(venue="SIMB", start_ns=T0))
    assert [i.id.symbol.value for i in named] == [i.id.symbol.value for i in default]
    assert {i.id.venue.value for i in default} == {"SIM"} and {i.id.venue.value for i in named} == {"SIMB"}
    market = SimMarket([Profile(100, 2, 3, 5.0)] * len(named), seed=5)
    with pytest.raises(ValueError, match="not in the SIMB universe"):
        HistoryPlan(market, named, {"BTCUSDT.SIM": "failed"}, "SIMB")
    failed = HistoryPlan(market, named, {"BTCUSDT.SIMB": "failed"}, "SIMB").fetch("BTCUSDT.SIMB", T0, T0 + MINUTE_NS)
    assert failed.error is not None and failed.error.startswith("SIMB history for BTCUSDT.SIMB")
