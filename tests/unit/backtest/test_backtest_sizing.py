"""Entries sized by ``fraction`` of the equity and by ``notional``: each entry's fill quantity
is the budget over the signal bar's close, floored to whole size steps, computed here from the
served equity curve and signals; a budget below one step makes no entry."""

from __future__ import annotations

import json
from decimal import ROUND_FLOOR, Decimal
from pathlib import Path

import msgspec
import pytest
from backtest_support import IID, ema_plan, node_catalog, run_spec

from spine.backtest import RunOutputs, run_backtest
from spine.backtest.bars import load_instrument

STEP = Decimal("0.001")  # the walk's size step (size precision 3)


def run(catalog: Path, **sizing: str) -> RunOutputs:
    plan = msgspec.structs.replace(ema_plan(5, 20, "LONG_ONLY"), quantity=None, **sizing)
    return run_backtest(plan, run_spec(plan), [catalog], cancelled=lambda: False, log=lambda level, message: None)


def entries(outputs: RunOutputs, catalog: Path) -> list[tuple[str, Decimal, Decimal]]:
    """Each entry: its signal's close time, that bar's close and the quantity bought."""
    bars = load_instrument([catalog], IID, "1m", "EXTERNAL", None, None)
    closes = dict(zip(bars.columns["ts_event"].tolist(), bars.columns["close"].tolist(), strict=True))
    bought: dict[str, Decimal] = {}  # an order may fill in several parts
    for fill in (json.loads(d) for d in outputs.fills):
        if fill["side"] == "BUY":
            bought[fill["ts_event"]] = bought.get(fill["ts_event"], Decimal(0)) + Decimal(fill["last_qty"])
    signals = [json.loads(s) for s in outputs.signals]
    return [
        (s["ts_event"], Decimal(closes[int(s["ts_event"])]).scaleb(-2), bought[s["ts_event"]])
        for s in signals
        if s["direction"] == "LONG"
    ]


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return node_catalog(tmp_path_factory.mktemp("node"), bars=2000)


def floored(budget: Decimal, price: Decimal) -> Decimal:
    return (budget / price / STEP).to_integral_value(rounding=ROUND_FLOOR) * STEP


def test_a_notional_buys_what_it_pays_for_at_the_close(catalog: Path) -> None:
    outputs = run(catalog, notional="1234.5")
    made = entries(outputs, catalog)
    assert len(made) > 5
    for ts, close, quantity in made:
        assert quantity == floored(Decimal("1234.5"), close), ts


def test_a_fraction_buys_that_share_of_the_equity_at_the_signal(catalog: Path) -> None:
    outputs = run(catalog, fraction="0.37")
    points = [json.loads(p) for p in outputs.equity]
    before = {later["ts_event"]: earlier for earlier, later in zip(points, points[1:], strict=False)}
    made = entries(outputs, catalog)
    assert len(made) > 5
    for ts, close, quantity in made:
        # Flat before the entry: the equity at the signal is the previous close's.
        assert quantity == floored(Decimal(before[ts]["equity"]) * Decimal("0.37"), close), ts


def test_a_budget_below_one_step_makes_no_entry(catalog: Path) -> None:
    outputs = run(catalog, notional="0.00001")
    assert outputs.signals == [] and outputs.fills == []
