"""Shared pieces of the backtest tests: the EMA-cross plan built by hand, a run spec, a node
catalog dir with one walking instrument, and the same strategy written by hand run on a raw
BacktestEngine (the oracle)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import msgspec

from reference.backtest_catalog import spot, walk_bars, write_catalog
from reference.ema_cross_nautilus import HandEmaCross, HandEmaCrossConfig
from spine.backtest import RunSpec
from spine.strategies.plan import FeatureDecl, StrategyPlan

IID = "C000USDT.SIM"


def cross(op: str) -> str:
    return json.dumps(
        {"key": "ema_fast.value", "op": op, "ref": "ema_slow.value"}, sort_keys=True, separators=(",", ":")
    )


def ema_plan(
    fast: int = 10,
    slow: int = 30,
    direction: str = "LONG_SHORT",
    resolution: str = "1m",
    instruments: tuple[str, ...] = (IID,),
    **risk: str,
) -> StrategyPlan:
    rules = {"entry_long": cross("CROSSES_ABOVE"), "exit_long": cross("CROSSES_BELOW")}
    if direction != "LONG_ONLY":
        rules |= {"entry_short": cross("CROSSES_BELOW"), "exit_short": cross("CROSSES_ABOVE")}
    return StrategyPlan(
        name="EMA cross",
        template_id="ema_cross",
        instruments=list(instruments),
        resolution=resolution,
        channel="EXTERNAL",
        direction=direction,
        parameters=[],
        values={"fast": str(fast), "slow": str(slow)},
        features=[
            FeatureDecl("ema_fast", "spine_core.features.ema", {"period": str(fast)}),
            FeatureDecl("ema_slow", "spine_core.features.ema", {"period": str(slow)}),
        ],
        rules=rules,
        quantity="1",
        stop_loss=risk.get("stop_loss"),
        take_profit=risk.get("take_profit"),
    )


def template_plan(instrument_id: str = IID) -> StrategyPlan:
    """The EMA-cross template's plan at its defaults (fast 10, slow 30, LONG_ONLY, quantity
    0.1), on ``instrument_id``."""
    from spine.strategies.document import plan
    from spine.strategies.templates import template_files

    return msgspec.structs.replace(plan(template_files("ema_cross")), instruments=[instrument_id])


def run_spec(plan: StrategyPlan, **changes: Any) -> RunSpec:
    # What the spec and the request it came from both name, in the order each lists it.
    run = {
        "strategy_id": "ema_cross",
        "revision_id": "b" * 64,
        "instrument_id": None,
        "start": None,
        "end": None,
        "resolution": plan.resolution,
        "channel": plan.channel,
    }
    request = run | {"parameters": plan.values, "name": "test"}
    fields: dict[str, Any] = {"job_id": "a" * 64} | run | {"values": plan.values, "request": request}
    return RunSpec(**(fields | changes))


def node_catalog(
    tmp: Path, bars: int = 3000, skip: tuple[int, ...] = (), seed: int = 7, instruments: tuple[str, ...] = (IID,)
) -> Path:
    """A node catalog dir (``<tmp>/catalog``) holding ``instruments`` and their walks."""
    made = [spot(iid) for iid in instruments]
    return write_catalog(
        tmp, made, {str(i.id): walk_bars(i, "EXTERNAL", bars, seed=seed + k, skip=skip) for k, i in enumerate(made)}
    )


def hand_run(
    catalog: Path, fast: int, slow: int, direction: str, iid: str = IID, quantity: str = "1"
) -> dict[str, Any]:
    """The hand-written EMA cross on a raw BacktestEngine fed the catalog's bars, with the
    same venue configuration: its orders, fills and final balance."""
    from nautilus_trader.backtest.config import BacktestEngineConfig
    from nautilus_trader.backtest.engine import BacktestEngine
    from nautilus_trader.backtest.models import FillModel, MakerTakerFeeModel
    from nautilus_trader.config import LoggingConfig
    from nautilus_trader.model.currencies import USDT
    from nautilus_trader.model.enums import AccountType, OmsType
    from nautilus_trader.model.identifiers import TraderId, Venue
    from nautilus_trader.model.objects import Money
    from nautilus_trader.persistence.catalog import ParquetDataCatalog

    root = ParquetDataCatalog(str(catalog / "external"))
    bar_type = f"{iid}-1-MINUTE-LAST-EXTERNAL"
    engine = BacktestEngine(
        config=BacktestEngineConfig(trader_id=TraderId("BACKTESTER-001"), logging=LoggingConfig(log_level="ERROR"))
    )
    engine.add_venue(
        venue=Venue("SIM"),
        oms_type=OmsType.NETTING,
        account_type=AccountType.MARGIN,
        starting_balances=[Money(Decimal("100000"), USDT)],
        base_currency=None,
        default_leverage=Decimal(1),
        fill_model=FillModel(prob_fill_on_limit=1.0, prob_slippage=0.0, random_seed=42),
        fee_model=MakerTakerFeeModel(),
        bar_execution=True,
    )
    engine.add_instrument(root.instruments(instrument_ids=[iid])[0])
    engine.add_data(root.bars(bar_types=[bar_type]))
    engine.add_strategy(
        HandEmaCross(
            HandEmaCrossConfig(bar_type=bar_type, fast=fast, slow=slow, quantity=quantity, direction=direction)
        )
    )
    engine.run()
    orders = sorted(engine.cache.orders(), key=lambda o: (o.ts_init, o.client_order_id.value))
    result = {
        "orders": [(o.side_string(), str(o.ts_init), str(o.quantity), o.status_string()) for o in orders],
        "fills": [
            (e.order_side, str(e.last_px), str(e.last_qty), str(e.commission).partition(" ")[0], str(e.ts_event))
            for o in orders
            for e in o.events
            if type(e).__name__ == "OrderFilled"
        ],
        "balance": engine.cache.account_for_venue(Venue("SIM")).balance_total(USDT).as_decimal(),
    }
    engine.dispose()
    return result
