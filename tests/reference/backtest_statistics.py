"""The backtest statistics of docs/contract.md ("Backtest statistics") written again, plainly,
in floats with the standard library's ``statistics`` module: no shared code with
``spine.backtest.statistics``, so the two agree only if both follow the formulas.

``points`` are ``(ts, equity)`` at the bar closes; ``trades`` are ``(ts_opened, ts_closed,
pnl, notional)``."""

from __future__ import annotations

import itertools
import math
import statistics as stdlib
from typing import Any

DAY = 86_400 * 10**9


def drawdown(series: list[tuple[int, float]]) -> tuple[float, int]:
    """Max drawdown and its longest duration: the peaks are the points at their running
    maximum; a drawdown spans from one to the next point back at its level (or the end)."""
    highs = list(itertools.accumulate((v for _, v in series), max))
    worst = max(1 - v / h for (_, v), h in zip(series, highs, strict=True))
    peaks = [i for i, ((_, v), h) in enumerate(zip(series, highs, strict=True)) if v >= h]
    spans = [series[b][0] - series[a][0] for a, b in zip(peaks, peaks[1:], strict=False) if b > a + 1]
    if peaks[-1] != len(series) - 1:
        spans.append(series[-1][0] - series[peaks[-1]][0])
    return worst, max(spans, default=0)


def daily_returns(capital: float, points: list[tuple[int, float]]) -> list[float]:
    days: dict[int, float] = {}
    for ts, value in points:
        days[(ts - 1) // DAY] = value  # the last point of the day; a midnight close ends the day before
    levels = [capital] + [days[d] for d in sorted(days)]
    return [b / a - 1 for a, b in zip(levels, levels[1:], strict=False)]


def figures(
    capital: float,
    start: int,
    points: list[tuple[int, float]],
    trades: list[tuple[int, int, float, float]],
    trading_days: int,
) -> dict[str, Any]:
    final = points[-1][1] if points else capital
    span_years = ((points[-1][0] if points else start) - start) / (365.25 * DAY)
    worst, longest = drawdown([(start, capital)] + points)
    cagr = None
    if final > 0 and span_years > 0 and math.log(final / capital) / span_years <= math.log(1e12 + 1):
        cagr = (final / capital) ** (1 / span_years) - 1
    r = daily_returns(capital, points)
    sharpe = sortino = None
    if len(r) >= 2 and stdlib.stdev(r) > 0:
        sharpe = stdlib.mean(r) / stdlib.stdev(r) * math.sqrt(trading_days)
    downside = math.sqrt(sum(min(x, 0.0) ** 2 for x in r) / len(r)) if r else 0.0
    if downside > 0:
        sortino = stdlib.mean(r) / downside * math.sqrt(trading_days)
    pnls = [t[2] for t in trades]
    rets = [t[2] / t[3] for t in trades]
    n = len(trades)
    losses = -sum(p for p in pnls if p < 0)
    avg = None
    if rets and all(1 + x > 0 for x in rets):
        avg = math.exp(sum(math.log(1 + x) for x in rets) / n) - 1
    return {
        "total_return": final / capital - 1,
        "cagr": cagr,
        "max_drawdown": worst,
        "max_drawdown_duration_ns": longest,
        "sharpe": sharpe,
        "sortino": sortino,
        "calmar": cagr / worst if cagr is not None and worst > 0 else None,
        "win_rate": sum(p > 0 for p in pnls) / n if n else None,
        "profit_factor": sum(p for p in pnls if p > 0) / losses if losses else None,
        "expectancy": stdlib.mean(rets) if rets else None,
        "best_trade": max(rets, default=None),
        "worst_trade": min(rets, default=None),
        "avg_trade": avg,
        "avg_trade_duration_ns": stdlib.mean(t[1] - t[0] for t in trades) if n else None,
        "max_trade_duration_ns": max((t[1] - t[0] for t in trades), default=None),
        "sqn": math.sqrt(n) * stdlib.mean(pnls) / stdlib.stdev(pnls) if n >= 2 and stdlib.stdev(pnls) > 0 else None,
    }
