"""Spine's backtest against backtesting.py on the same trades: backtesting.py's bundled GOOG
daily bars (2,148 rows) go through ``spine import`` into a catalog, Spine runs an SMA(10)/
SMA(20) cross on them with 10 shares and no fees, and backtesting.py replays Spine's signals
(``trade_on_close=True``, commission 0, the same 10 shares) on the same rows. Its trades equal
Spine's positions fill for fill; return, buy & hold, max drawdown and its duration, the trade
statistics and the exposure equal; Sharpe and Sortino equal the documented formula
(``reference.backtest_statistics``) over the served equity."""

from __future__ import annotations

import json
import math
import sys
import warnings
from decimal import Decimal
from pathlib import Path
from typing import Any

import msgspec
import pandas as pd
import pytest
from backtest_support import ema_plan, run_spec

from reference.backtest_statistics import figures
from spine.backtest import Execution, RunOutputs, run_backtest
from spine.importer.config import ImportOptions
from spine.importer.service import run_import
from spine.strategies.plan import FeatureDecl, StrategyPlan

backtesting = pytest.importorskip("backtesting", reason="backtesting.py is a test dependency (pyproject [test])")

IID = "GOOG.NASDAQ"
DAY = 86_400 * 10**9
SHARES = 10


@pytest.fixture(scope="module")
def goog() -> pd.DataFrame:
    from backtesting.test import GOOG

    return GOOG


@pytest.fixture(scope="module")
def catalog(goog: pd.DataFrame, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """GOOG through ``spine import`` (``--step 1d``): a catalog dir holding its daily bars."""
    work = tmp_path_factory.mktemp("goog")
    csv = work / "goog.csv"
    goog.to_csv(csv, index_label="date")
    run_import(ImportOptions(file=csv, venue="NASDAQ", catalog_dir=work, symbol="GOOG", step="1d", progress=False))
    return work


def sma_plan(fast: int, slow: int, direction: str) -> StrategyPlan:
    """The cross of two SMAs of the close on GOOG's daily bars (the EMA-cross plan's rules)."""
    return msgspec.structs.replace(
        ema_plan(fast, slow, direction, resolution="1d", instruments=(IID,)),
        features=[
            FeatureDecl("ema_fast", "spine_core.features.sma", {"period": str(fast)}),
            FeatureDecl("ema_slow", "spine_core.features.sma", {"period": str(slow)}),
        ],
    )


@pytest.fixture(scope="module")
def spine_run(catalog: Path) -> RunOutputs:
    plan = msgspec.structs.replace(sma_plan(10, 20, "LONG_ONLY"), quantity=str(SHARES))
    return run_backtest(plan, run_spec(plan), [catalog], cancelled=lambda: False, log=lambda level, message: None)


def replay(goog: pd.DataFrame, outputs: RunOutputs) -> Any:
    """backtesting.py acting on Spine's signals: a signal at a bar's close (Spine: the bar's
    close time; backtesting.py: the bar's index, its open date) buys or closes at that close."""
    actions = {
        pd.Timestamp(int(s["ts_event"]) - DAY, unit="ns"): s["direction"]
        for s in (json.loads(d) for d in outputs.signals)
    }

    class Replay(backtesting.Strategy):  # type: ignore[misc,name-defined]
        def init(self) -> None:
            pass

        def next(self) -> None:
            action = actions.get(self.data.index[-1])
            if action == "LONG":
                self.buy(size=SHARES)
            elif action == "FLAT":
                self.position.close()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "some trades remain open": they are marked, as Spine's
        test = backtesting.Backtest(goog, Replay, cash=100_000, commission=0, trade_on_close=True)
        return test.run()


def same(ours: str | None, theirs: float) -> None:
    assert ours is not None
    assert math.isclose(float(ours), theirs, rel_tol=1e-9, abs_tol=1e-8), (ours, theirs)


def test_backtesting_py_on_the_same_trades_gives_the_same_figures(goog: pd.DataFrame, spine_run: RunOutputs) -> None:
    stats = json.loads(spine_run.statistics)
    theirs = replay(goog, spine_run)
    trades = theirs["_trades"]
    positions = [json.loads(p) for p in spine_run.positions]
    closed = [p for p in positions if p["side"] == "FLAT"]
    assert len(closed) == len(trades) > 20
    for position, trade in zip(closed, trades.itertuples(), strict=True):
        assert Decimal(position["avg_px_open"]) == Decimal(str(trade.EntryPrice))
        assert Decimal(position["avg_px_close"]) == Decimal(str(trade.ExitPrice))
        assert int(position["ts_opened"]) - DAY == pd.Timestamp(trade.EntryTime).value
        assert Decimal(position["realized_pnl"]) == Decimal(str(round(trade.PnL, 6)))

    same(stats["total_return"], theirs["Return [%]"] / 100)
    same(stats["buy_and_hold_return"], theirs["Buy & Hold Return [%]"] / 100)
    same(stats["max_drawdown"], -theirs["Max. Drawdown [%]"] / 100)
    assert int(stats["max_drawdown_duration_ns"]) == theirs["Max. Drawdown Duration"].value
    assert stats["trade_count"] == theirs["# Trades"]
    same(stats["win_rate"], theirs["Win Rate [%]"] / 100)
    same(stats["best_trade"], theirs["Best Trade [%]"] / 100)
    same(stats["worst_trade"], theirs["Worst Trade [%]"] / 100)
    same(stats["avg_trade"], theirs["Avg. Trade [%]"] / 100)
    same(stats["expectancy"], theirs["Expectancy [%]"] / 100)
    same(stats["sqn"], theirs["SQN"])
    assert int(stats["max_trade_duration_ns"]) == theirs["Max. Trade Duration"].value
    # backtesting.py rounds the mean duration up to its bars' period (a day).
    assert math.ceil(int(stats["avg_trade_duration_ns"]) / DAY) * DAY == theirs["Avg. Trade Duration"].value
    # Profit factor in PnL (backtesting.py's is in trade returns): the documented formula on its trades.
    gains, losses = trades.PnL[trades.PnL > 0].sum(), -trades.PnL[trades.PnL < 0].sum()
    same(stats["profit_factor"], gains / losses)
    # Exposure: backtesting.py counts closed trades only; Spine counts the position still open
    # at the end too (to the last bar), which the open trade of its strategy gives.
    held = [0] * len(goog)
    spans = [(t.EntryBar, t.ExitBar) for t in trades.itertuples()]
    spans += [(t.entry_bar, len(goog) - 1) for t in theirs["_strategy"].trades]
    for entry, exit_ in spans:
        held[entry : exit_ + 1] = [1] * (exit_ + 1 - entry)
    same(stats["exposure"], sum(held) / len(goog))


def test_sharpe_and_sortino_are_the_documented_formula_on_the_served_equity(spine_run: RunOutputs) -> None:
    stats = json.loads(spine_run.statistics)
    points = [json.loads(p) for p in spine_run.equity]
    report = json.loads(spine_run.report)
    reference = figures(
        float(stats["starting_balance"]),
        int(report["start"]),
        [(int(p["ts_event"]), float(p["equity"])) for p in points],
        [],
        stats["trading_days_per_year"],
    )
    assert stats["trading_days_per_year"] == 252  # an equity
    for name in ("sharpe", "sortino", "cagr", "calmar", "max_drawdown", "total_return"):
        same(stats[name], reference[name])


def test_the_canonical_sma_cross_reverses_as_backtesting_py_does(goog: pd.DataFrame, catalog: Path) -> None:
    """backtesting.py's SmaCross example (SMA 10/20; on a cross, close and reverse; its default
    size, all but an epsilon of the equity; commission 0; 10,000 cash) with ``trade_on_close``,
    against the same strategy declared for Spine (LONG_SHORT, ``fraction`` sizing): every trade
    and the final equity equal."""
    from backtesting.lib import crossover
    from backtesting.test import SMA

    class SmaCross(backtesting.Strategy):  # type: ignore[misc,name-defined]
        def init(self) -> None:
            self.sma1 = self.I(SMA, self.data.Close, 10)
            self.sma2 = self.I(SMA, self.data.Close, 20)

        def next(self) -> None:
            if crossover(self.sma1, self.sma2):
                self.position.close()
                self.buy()
            elif crossover(self.sma2, self.sma1):
                self.position.close()
                self.sell()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = backtesting.Backtest(goog, SmaCross, cash=10_000, commission=0, trade_on_close=True).run()
    plan = msgspec.structs.replace(
        sma_plan(10, 20, "LONG_SHORT"), quantity=None, fraction=str(1 - sys.float_info.epsilon)
    )
    spec = run_spec(plan, execution=Execution(capital="10000"))
    ours = run_backtest(plan, spec, [catalog], cancelled=lambda: False, log=lambda level, message: None)
    positions = [json.loads(p) for p in ours.positions]
    trades = list(theirs["_trades"].itertuples()) + [None] * len(theirs["_strategy"].trades)
    assert len(positions) == len(trades) > 40
    for position, trade in zip(positions, theirs["_trades"].itertuples(), strict=False):
        assert int(position["ts_opened"]) - DAY == pd.Timestamp(trade.EntryTime).value
        assert int(position["ts_closed"]) - DAY == pd.Timestamp(trade.ExitTime).value
        assert Decimal(position["avg_px_open"]) == Decimal(str(trade.EntryPrice))
        assert Decimal(position["avg_px_close"]) == Decimal(str(trade.ExitPrice))
        # Equal prices and equal PnL: equal sizes.
        assert Decimal(position["realized_pnl"]) == Decimal(str(round(trade.PnL, 6))), (position, trade)
    stats = json.loads(ours.statistics)
    same(stats["ending_equity"], theirs["Equity Final [$]"])
    same(stats["total_return"], theirs["Return [%]"] / 100)
    same(stats["max_drawdown"], -theirs["Max. Drawdown [%]"] / 100)
    assert stats["trade_count"] == theirs["# Trades"]
