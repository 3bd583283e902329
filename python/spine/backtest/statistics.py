"""The statistics a trader reads, from the equity marked to market at every bar close
(:mod:`spine.backtest.equity`) and the closed positions, as decimal strings at ``SCALE`` (8)
fractional digits, rounded half to even; null where a statistic is undefined. Durations are
nanoseconds as digit strings. docs/contract.md ("Backtest statistics") gives every formula;
in short, with ``C`` the starting capital, ``E_1..E_n`` the equity at the bar closes
``t_1..t_n`` and ``E_0 = C`` at the run's start ``t_0``:

- ``total_return = E_n / C - 1``; ``cagr = (E_n / C) ^ (1 / years) - 1``, ``years = (t_n -
  t_0) / 365.25 days``; ``buy_and_hold_return``: ``last close / first close - 1`` (the mean
  over the run's instruments);
- ``max_drawdown = max_k (1 - E_k / max_{j<=k} E_j)``; its duration: the longest time from a
  peak to the first point back at it (or the last point);
- ``sharpe = mean(r) / stdev(r) * sqrt(N)``, ``sortino = mean(r) / sqrt(mean(min(r, 0)^2)) *
  sqrt(N)`` over the daily returns ``r`` of the equity's last point per UTC day (the first
  against ``C``), ``N`` the trading days per year; ``calmar = cagr / max_drawdown``;
- per closed position (trade): ``pnl`` its realized PnL (commissions included) and ``r = pnl /
  entry notional``: ``win_rate`` (``pnl > 0``), ``profit_factor`` (gross profit over gross
  loss, in PnL), ``expectancy`` (mean ``r``), ``best_trade``/``worst_trade`` (max/min ``r``),
  ``avg_trade`` (geometric mean of ``r``), trade durations (mean and max), ``sqn = sqrt(n) *
  mean(pnl) / stdev(pnl)``, ``trade_count``;
- ``exposure``: bars that closed with a position open (entry bar to exit bar) over bars taken.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import ROUND_HALF_EVEN, Decimal, localcontext
from typing import Any, NamedTuple

from spine.backtest.equity import DAY_NS, Point, daily

__all__ = ["CAGR_MAX", "SCALE", "Trade", "ratio", "rounded", "statistics", "statistics_document"]

SCALE = 8
_QUANTUM = Decimal(1).scaleb(-SCALE)
_YEAR_NS = Decimal(DAY_NS) * Decimal("365.25")
_PREC = 60
#: A CAGR above this is null: the annualisation of a run too short to annualise.
CAGR_MAX = Decimal(10) ** 12
_CAGR_LN_MAX = (CAGR_MAX + 1).ln()


class Trade(NamedTuple):
    """A closed position: when it opened and closed, its realized PnL and the notional of the
    fills that opened it (both in the run's currency)."""

    ts_opened: int
    ts_closed: int
    pnl: Decimal
    notional: Decimal


def rounded(value: Decimal) -> str:
    """``value`` rounded half to even at SCALE, as a decimal string (no negative zero)."""
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


def _shown(value: Decimal | None) -> str | None:
    return None if value is None else rounded(value)


def _mean(values: Sequence[Decimal]) -> Decimal:
    return sum(values, Decimal(0)) / len(values)


def _stdev(values: Sequence[Decimal]) -> Decimal:
    """The sample standard deviation (n - 1); needs two values."""
    mean = _mean(values)
    return (sum(((v - mean) ** 2 for v in values), Decimal(0)) / (len(values) - 1)).sqrt()


def max_drawdown(equity: Sequence[tuple[int, Decimal]]) -> tuple[Decimal, int]:
    """The largest fall from a running peak as a fraction of the peak, and the longest time
    from a peak to the first point back at it (or to the last point, still below it)."""
    worst, longest, falling = Decimal(0), 0, False
    peak_ts, peak = equity[0]
    for ts, value in equity:
        if value >= peak:
            if falling:
                longest = max(longest, ts - peak_ts)
            peak_ts, peak, falling = ts, value, False
        else:
            falling = True
            if peak > 0:
                worst = max(worst, (peak - value) / peak)
    if falling:
        longest = max(longest, equity[-1][0] - peak_ts)
    return worst, longest


def _ratios(capital: Decimal, days: list[Point], trading_days: int) -> tuple[Decimal | None, Decimal | None]:
    """Sharpe and Sortino of the daily returns (see the module docs)."""
    levels = [capital] + [p.equity for p in days]
    if any(level <= 0 for level in levels[:-1]):
        return None, None
    returns = [b / a - 1 for a, b in zip(levels, levels[1:], strict=False)]
    if not returns:
        return None, None
    root = Decimal(trading_days).sqrt()
    mean = _mean(returns)
    sharpe = None
    if len(returns) >= 2 and (deviation := _stdev(returns)) != 0:
        sharpe = mean / deviation * root
    downside = _mean([min(r, Decimal(0)) ** 2 for r in returns]).sqrt()
    return sharpe, (None if downside == 0 else mean / downside * root)


def _trades(trades: list[Trade]) -> dict[str, Any]:
    """The closed positions' statistics (see the module docs)."""
    n = len(trades)
    pnls = [t.pnl for t in trades]
    returns = [t.pnl / t.notional for t in trades if t.notional != 0]
    durations = [t.ts_closed - t.ts_opened for t in trades]
    gains = sum((p for p in pnls if p > 0), Decimal(0))
    losses = -sum((p for p in pnls if p < 0), Decimal(0))
    growth = Decimal(1)
    for r in returns:
        growth *= 1 + r
    geometric = None
    if returns and all(1 + r > 0 for r in returns):
        geometric = growth ** (Decimal(1) / len(returns)) - 1
    sqn = None
    if n >= 2 and (deviation := _stdev(pnls)) != 0:
        sqn = Decimal(n).sqrt() * _mean(pnls) / deviation
    return {
        "win_rate": ratio(Decimal(sum(1 for p in pnls if p > 0)), Decimal(n)),
        "profit_factor": ratio(gains, losses),
        "expectancy": _shown(_mean(returns)) if returns else None,
        "best_trade": _shown(max(returns)) if returns else None,
        "worst_trade": _shown(min(returns)) if returns else None,
        "avg_trade": _shown(geometric),
        "avg_trade_duration_ns": str(_nanos(Decimal(sum(durations)) / n)) if n else None,
        "max_trade_duration_ns": str(max(durations)) if n else None,
        "sqn": _shown(sqn),
        "trade_count": str(n),
    }


def _nanos(value: Decimal) -> int:
    return int(value.quantize(Decimal(1), rounding=ROUND_HALF_EVEN))


def _cagr(growth: Decimal, years: Decimal) -> Decimal | None:
    """``growth ^ (1 / years) - 1``; None for no span, no equity left, or a rate past
    ``CAGR_MAX`` (a short run's annualisation, meaningless)."""
    if growth <= 0 or years <= 0:
        return None
    exponent = growth.ln() / years
    return None if exponent > _CAGR_LN_MAX else exponent.exp() - 1


def statistics(
    *,
    currency: str,
    capital: Decimal,
    start: int,
    curve: list[Point],
    trades: list[Trade],
    buy_and_hold: Decimal | None,
    trading_days: int,
    bars_seen: int,
    bars_exposed: int,
) -> dict[str, Any]:
    """The statistics document's figures (see the module docs). ``start`` is the run's start
    (the first bar's open), ``curve`` the marked equity at every bar close."""
    with localcontext() as context:
        context.prec = _PREC
        final = curve[-1] if curve else Point(start, capital, capital)
        equity = [(start, capital)] + [(p.ts, p.equity) for p in curve]
        drawdown, drawdown_ns = max_drawdown(equity)
        years = Decimal(final.ts - start) / _YEAR_NS
        cagr = _cagr(final.equity / capital, years)
        sharpe, sortino = _ratios(capital, daily(curve), trading_days)
        return {
            "scale": SCALE,
            "currency": currency,
            "starting_balance": format(capital, "f"),
            "ending_balance": format(final.balance, "f"),
            "ending_equity": format(final.equity, "f"),
            "total_pnl": format(final.equity - capital, "f"),
            "total_return": ratio(final.equity - capital, capital),
            "cagr": _shown(cagr),
            "buy_and_hold_return": _shown(buy_and_hold),
            "max_drawdown": rounded(drawdown),
            "max_drawdown_duration_ns": str(drawdown_ns),
            "sharpe": _shown(sharpe),
            "sortino": _shown(sortino),
            "calmar": None if cagr is None or drawdown == 0 else rounded(cagr / drawdown),
            "trading_days_per_year": trading_days,
            **_trades(trades),
            "exposure": ratio(Decimal(bars_exposed), Decimal(bars_seen)),
        }


def statistics_document(stats: dict[str, Any], *, job_id: str, run_id: str, bars: int) -> dict[str, Any]:
    """``svc.backtest_statistics`` (an own document) of a run's statistics."""
    return {
        "version": "spine.v2",
        "schema_id": "svc.backtest_statistics",
        "schema_version": 2,
        "job_id": job_id,
        "run_id": run_id,
        **{key: value for key, value in stats.items() if key not in ("scale", "trade_count")},
        "trade_count": int(stats["trade_count"]),
        "bars": bars,
    }
