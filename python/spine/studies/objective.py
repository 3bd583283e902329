"""What a study optimises and where: its objective, a statistic of each trial's backtest report
(``svc.backtest_statistics``) with a direction, and its two windows, the training window its
trials run on and an optional holdout that follows it in time and never takes part in the
selection.

A trial's objective value is the statistic as the report served it, an exact decimal (integer
counts and durations included). A statistic the report leaves null (a Sharpe ratio of a run
without two daily returns, a profit factor without a losing trade) is no value: the trial is
Optuna's FAIL with that reason, never a number made up for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

__all__ = ["DIRECTIONS", "METRICS", "Objective", "ObjectiveError", "Windows", "objective_value"]

#: The statistics a study may optimise: every number of ``svc.backtest_statistics`` that
#: measures the strategy (not the instrument's buy & hold, not the run's own bar count).
METRICS = (
    "avg_trade",
    "avg_trade_duration_ns",
    "best_trade",
    "cagr",
    "calmar",
    "ending_balance",
    "ending_equity",
    "expectancy",
    "exposure",
    "max_drawdown",
    "max_drawdown_duration_ns",
    "max_trade_duration_ns",
    "profit_factor",
    "sharpe",
    "sortino",
    "sqn",
    "total_pnl",
    "total_return",
    "trade_count",
    "win_rate",
    "worst_trade",
)
DIRECTIONS = ("MAXIMIZE", "MINIMIZE")
Direction = Literal["MAXIMIZE", "MINIMIZE"]


class ObjectiveError(ValueError):
    """An objective or windows a study cannot have: the text names what and what is allowed."""


@dataclass(frozen=True)
class Objective:
    metric: str
    direction: Direction

    def __post_init__(self) -> None:
        if self.metric not in METRICS:
            allowed = ", ".join(METRICS)
            raise ObjectiveError(f"objective.metric {self.metric!r}: allowed a statistic of the report: {allowed}")
        if self.direction not in DIRECTIONS:
            raise ObjectiveError(f"objective.direction {self.direction!r}: allowed {', '.join(DIRECTIONS)}")


@dataclass(frozen=True)
class Windows:
    """The training window (bar closes, both inclusive, ns) and the holdout after it, if any."""

    training: tuple[int, int]
    holdout: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        for name, span in (("training", self.training), ("holdout", self.holdout)):
            if span is not None and span[0] > span[1]:
                raise ObjectiveError(f"{name}: start {span[0]} is after end {span[1]}; allowed start <= end")
        if self.holdout is not None and self.holdout[0] <= self.training[1]:
            raise ObjectiveError(
                f"holdout.start {self.holdout[0]} is not after training.end {self.training[1]}; allowed: a holdout "
                "that follows the training window in time (it never takes part in the selection)"
            )


def objective_value(statistics: dict[str, Any], objective: Objective) -> tuple[Decimal | None, str]:
    """The objective's exact value in a ``svc.backtest_statistics`` document, or None and why."""
    raw = statistics.get(objective.metric)
    if raw is None:
        return None, f"{objective.metric} is null in the trial's report (undefined for its run)"
    return Decimal(str(raw)), ""
