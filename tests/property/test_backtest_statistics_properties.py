"""Property tests: the backtest statistics (``spine.backtest.statistics``) equal the plain-float
reference of the documented formulas (``reference.backtest_statistics``) on random marked
equity curves and random trade sequences: every figure within the rounding of its 8 digits,
and null exactly where the reference has no value."""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from reference.backtest_statistics import DAY, figures
from spine.backtest.equity import Point
from spine.backtest.statistics import Trade, statistics

START = 1_600_000_000 * 10**9
MINUTE = 60 * 10**9

cents = st.integers(min_value=1, max_value=10**9)
steps = st.sampled_from([MINUTE, 5 * MINUTE, 3_600 * 10**9, DAY, 3 * DAY])


@st.composite
def curves(draw: Any) -> tuple[Decimal, list[Point]]:
    capital = Decimal(draw(st.integers(min_value=1_000, max_value=10**7)))
    ts, points = START, []
    for value in draw(st.lists(cents, max_size=80)):
        ts += draw(steps)
        equity = Decimal(value).scaleb(-2)
        points.append(Point(ts, capital, equity))
    return capital, points


@st.composite
def trades(draw: Any) -> list[Trade]:
    made = []
    for _ in range(draw(st.integers(min_value=0, max_value=30))):
        opened = START + draw(st.integers(min_value=0, max_value=400)) * DAY
        closed = opened + draw(st.integers(min_value=0, max_value=90 * 24 * 60)) * MINUTE
        notional = Decimal(draw(st.integers(min_value=1, max_value=10**8))).scaleb(-2)
        pnl = Decimal(draw(st.integers(min_value=-(10**8), max_value=10**8))).scaleb(-2)
        made.append(Trade(opened, closed, pnl, notional))
    return made


def close(ours: str | None, theirs: float | None, name: str) -> None:
    assert (ours is None) == (theirs is None), (name, ours, theirs)
    if ours is not None and theirs is not None:
        assert math.isclose(float(ours), theirs, rel_tol=1e-9, abs_tol=1e-8), (name, ours, theirs)


@given(curves(), trades(), st.sampled_from([252, 365]))
def test_statistics_equal_the_reference(curve: tuple[Decimal, list[Point]], made: list[Trade], days: int) -> None:
    capital, points = curve
    ours = statistics(
        currency="USD",
        capital=capital,
        start=START,
        curve=points,
        trades=made,
        buy_and_hold=None,
        trading_days=days,
        bars_seen=len(points),
        bars_exposed=len(points) // 2,
    )
    theirs = figures(
        float(capital),
        START,
        [(p.ts, float(p.equity)) for p in points],
        [(t.ts_opened, t.ts_closed, float(t.pnl), float(t.notional)) for t in made],
        days,
    )
    for name in ("total_return", "cagr", "max_drawdown", "sharpe", "sortino", "calmar", "win_rate"):
        close(ours[name], theirs[name], name)
    for name in ("profit_factor", "expectancy", "best_trade", "worst_trade", "avg_trade", "sqn"):
        close(ours[name], theirs[name], name)
    assert ours["max_drawdown_duration_ns"] == str(theirs["max_drawdown_duration_ns"])
    assert ours["max_trade_duration_ns"] == (None if not made else str(theirs["max_trade_duration_ns"]))
    if made:
        assert abs(int(ours["avg_trade_duration_ns"]) - theirs["avg_trade_duration_ns"]) <= 1
    assert ours["trade_count"] == str(len(made))
    assert ours["ending_equity"] == format(points[-1].equity if points else capital, "f")
