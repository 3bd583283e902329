"""The statistics a trader reads, as decimal strings at ``SCALE`` (8) fractional digits,
rounded half to even; null where a statistic is undefined. Exact ones are computed from the
exact balances and positions; two come from the framework's portfolio analyzer (floats, turned
into decimals explicitly: the shortest repr of the float, rounded at ``SCALE``).

- ``total_return``: ``(ending_balance - starting_balance) / starting_balance``; exact.
- ``max_drawdown``: the largest fall of the equity curve (account balance after each change,
  i.e. realized, commissions included) from its running peak, as a fraction of that peak
  (``0`` when it never fell); exact.
- ``win_rate``: closed positions (cycles) with ``realized_pnl > 0`` over closed positions;
  null without one; exact.
- ``profit_factor``: the sum of positive realized PnLs over the absolute sum of negative ones,
  closed positions; null without a loss; exact.
- ``trade_count``: closed positions (round trips), an integer.
- ``exposure``: bars (all instruments) that closed with a position open, over bars taken;
  null without bars; exact.
- ``skipped`` (added by the engine): the withheld spans, ``{instrument_id, resolution, start,
  end, reason}``, the report's list of what the run skipped.
- ``sharpe``, ``sortino``: the analyzer's "Sharpe Ratio (252 days)" and "Sortino Ratio (252
  days)" (daily returns of realized PnL, annualised over 252 days); null when NaN or infinite.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_EVEN, Decimal, localcontext
from typing import Any

__all__ = ["SCALE", "max_drawdown", "ratio", "rounded", "statistics", "statistics_document"]

SCALE = 8
_QUANTUM = Decimal(1).scaleb(-SCALE)


def rounded(value: Decimal) -> str:
    """``value`` rounded half to even at SCALE, as a decimal string (no negative zero).
    (``spine._core.quantize_decimal`` takes at most 18 fractional digits in; an exact
    quotient has more.)"""
    with localcontext() as context:
        context.prec = 80
        shown = format(value.quantize(_QUANTUM, rounding=ROUND_HALF_EVEN), "f")
    return shown[1:] if shown.startswith("-") and Decimal(shown) == 0 else shown


def ratio(numerator: Decimal, denominator: Decimal) -> str | None:
    """``numerator / denominator`` rounded half-even at SCALE; None when the denominator is 0."""
    if denominator == 0:
        return None
    with localcontext() as context:
        context.prec = 80
        value = numerator / denominator
    return rounded(value)


def from_float(value: Any) -> str | None:
    """An analyzer float as a decimal at SCALE (its shortest repr, rounded); None when it is
    not finite (or missing)."""
    if value is None:
        return None
    x = float(value)
    if not math.isfinite(x):
        return None
    return rounded(Decimal(repr(x)))


def max_drawdown(balances: list[Decimal]) -> str:
    peak: Decimal | None = None
    worst = Decimal(0)
    with localcontext() as context:
        context.prec = 80
        for balance in balances:
            if peak is None or balance > peak:
                peak = balance
            elif peak > 0:
                worst = max(worst, (peak - balance) / peak)
    return rounded(worst)


def statistics(
    *,
    currency: str,
    starting: Decimal,
    ending: Decimal,
    balances: list[Decimal],
    closed_pnls: list[Decimal],
    bars_seen: int,
    bars_exposed: int,
    analyzer_returns: dict[str, Any],
) -> dict[str, Any]:
    """The statistics document (see the module docs)."""
    wins = [p for p in closed_pnls if p > 0]
    losses = [p for p in closed_pnls if p < 0]
    return {
        "scale": SCALE,
        "currency": currency,
        "starting_balance": format(starting, "f"),
        "ending_balance": format(ending, "f"),
        "total_pnl": format(ending - starting, "f"),
        "total_return": ratio(ending - starting, starting),
        "sharpe": from_float(analyzer_returns.get("Sharpe Ratio (252 days)")),
        "sortino": from_float(analyzer_returns.get("Sortino Ratio (252 days)")),
        "max_drawdown": max_drawdown(balances),
        "win_rate": ratio(Decimal(len(wins)), Decimal(len(closed_pnls))),
        "profit_factor": ratio(sum(wins, Decimal(0)), -sum(losses, Decimal(0))),
        "trade_count": str(len(closed_pnls)),
        "exposure": ratio(Decimal(bars_exposed), Decimal(bars_seen)),
    }


def statistics_document(stats: dict[str, Any], *, job_id: str, run_id: str, bars: int) -> dict[str, Any]:
    """``svc.backtest_statistics`` (an own document) of a run's statistics."""
    return {
        "version": "spine.v2",
        "schema_id": "svc.backtest_statistics",
        "schema_version": 1,
        "job_id": job_id,
        "run_id": run_id,
        **{key: value for key, value in stats.items() if key not in ("scale", "trade_count")},
        "trade_count": int(stats["trade_count"]),
        "bars": bars,
    }
