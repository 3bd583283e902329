"""Property tests: the marked equity (``spine.backtest.equity.marked_curve``) equals a plain
average-price book on random closes and random fills (adds, partial reductions, flips, several
instruments closing at the same times or not), and the daily curve is the last point of each
UTC day."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from spine.backtest.equity import DAY_NS, UNREALIZED_DIGITS, Fill, Marks, daily, marked_curve

MINUTE = 60 * 10**9
BASE = 1_700_000_000 * 10**9


@st.composite
def instruments(draw: Any) -> Marks:
    price_scale = draw(st.integers(min_value=0, max_value=4))
    size_scale = draw(st.integers(min_value=0, max_value=3))
    count = draw(st.integers(min_value=1, max_value=40))
    ts = sorted(set(draw(st.lists(st.integers(min_value=1, max_value=3_000), min_size=count, max_size=count))))
    ts = [BASE + t * MINUTE for t in ts]
    closes = [draw(st.integers(min_value=1, max_value=10**7)) for _ in ts]
    fills = sorted(
        Fill(draw(st.sampled_from(ts)), draw(st.integers(min_value=-500, max_value=500)), draw(st.integers(1, 10**7)))
        for _ in range(draw(st.integers(min_value=0, max_value=12)))
    )
    fills = [f for f in fills if f.qty != 0]
    multiplier = draw(st.sampled_from([Decimal(1), Decimal(10), Decimal("0.5")]))
    return Marks(ts, closes, price_scale, size_scale, multiplier, fills)


def reference(capital: Decimal, marks: list[Marks]) -> list[tuple[int, Fraction]]:
    """At each close time: capital plus each instrument's ``qty * (close - average price)``."""
    times = sorted({t for m in marks for t in m.ts})
    points = []
    for t in times:
        total = Fraction(capital)
        for m in marks:
            qty, avg = Fraction(0), Fraction(0)
            for fill in (f for f in m.fills if f.ts <= t):
                q, px = Fraction(fill.qty, 10**m.size_scale), Fraction(fill.px, 10**m.price_scale)
                if qty == 0 or (qty > 0) == (q > 0):
                    avg = (avg * qty + px * q) / (qty + q)
                elif abs(q) > abs(qty):
                    avg = px  # flipped: the rest opens at the fill's price
                qty += q
                if qty == 0:
                    avg = Fraction(0)
            seen = [c for tt, c in zip(m.ts, m.closes, strict=True) if tt <= t]
            if qty and seen:
                total += Fraction(m.multiplier) * qty * (Fraction(seen[-1], 10**m.price_scale) - avg)
        points.append((t, total))
    return points


@given(st.lists(instruments(), min_size=1, max_size=3), st.integers(min_value=0, max_value=10**6))
def test_the_marked_equity_is_the_average_price_book(marks: list[Marks], capital_units: int) -> None:
    capital = Decimal(capital_units)
    # An instrument's fills before its first close have no close to be marked at: the run
    # never fills before a bar, so these are left out.
    marks = [m._replace(fills=[f for f in m.fills if f.ts >= m.ts[0]]) for m in marks]
    curve = marked_curve(capital, [], marks)
    expected = reference(capital, marks)
    assert [p.ts for p in curve] == [t for t, _ in expected]
    for point, (_, value) in zip(curve, expected, strict=True):
        assert point.balance == capital
        assert abs(Fraction(point.equity) - value) <= Fraction(1, 10**UNREALIZED_DIGITS) * len(marks), (point, value)


@given(st.lists(st.integers(min_value=1, max_value=20 * 1440), unique=True, min_size=1, max_size=60))
def test_the_daily_curve_is_the_last_point_of_each_day(minutes: list[int]) -> None:
    marks = [Marks(sorted(BASE + m * MINUTE for m in minutes), [1] * len(minutes), 0, 0, Decimal(1), [])]
    curve = marked_curve(Decimal(5), [], marks)
    days = daily(curve)
    last: dict[int, int] = {}
    for point in curve:
        last[(point.ts - 1) // DAY_NS] = point.ts
    assert [p.ts for p in days] == [last[d] for d in sorted(last)]
