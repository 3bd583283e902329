"""Backtests: a declarative strategy run on NautilusTrader's BacktestEngine over a node's
durable catalogs, with its report, documents and identities."""

from typing import Any

from spine.backtest.api import BacktestError, Execution, RunCancelled, RunFailed, RunOutputs, RunSpec

__all__ = ["BacktestError", "Execution", "RunCancelled", "RunFailed", "RunOutputs", "RunSpec", "run_backtest"]


def __getattr__(name: str) -> Any:
    # The engine imports the trading framework (seconds): a worker's parent, which finds this
    # package by name to check its runner, never pays for it; its job's child does.
    if name == "run_backtest":
        from spine.backtest.engine import run_backtest

        return run_backtest
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
