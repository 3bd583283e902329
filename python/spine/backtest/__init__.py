"""Backtests: a declarative strategy run on NautilusTrader's BacktestEngine over a node's
durable catalogs, with its report, documents and identities."""

from spine.backtest.api import BacktestError, Execution, RunCancelled, RunFailed, RunOutputs, RunSpec
from spine.backtest.engine import run_backtest

__all__ = ["BacktestError", "Execution", "RunCancelled", "RunFailed", "RunOutputs", "RunSpec", "run_backtest"]
