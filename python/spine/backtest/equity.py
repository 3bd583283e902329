"""The run's equity marked to market at every bar close: what a trader's account is worth,
open positions included, bar by bar.

At each distinct bar close time ``t`` of the run (all instruments merged), after every fill
and account change at or before ``t``:

    equity(t) = balance(t) + sum over instruments of multiplier * (qty * close - cost)

``balance(t)``: the starting capital (summed over venues) plus every commission paid and every
closed cycle's realized PnL by ``t`` (:func:`balance_curve`). ``qty``: the
instrument's net signed position from its fills; ``cost``: the signed cost of that position
(``sum(qty_fill * px_fill)`` of the fills that opened it; a fill that reduces it takes its
share of the cost, one that flips it opens the rest at its price). ``close``: the
instrument's latest bar close. Exact: integers at the instrument's price and size scales,
the cost of a partly reduced position as a fraction; a point's equity is exact, or rounded
half to even at ``UNREALIZED_DIGITS`` when the fraction does not terminate.

The daily curve takes the last point of each UTC day, a bar closing at midnight ending the
day before it.
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal, localcontext
from fractions import Fraction
from typing import NamedTuple

__all__ = ["DAY_NS", "UNREALIZED_DIGITS", "Cycle", "Fill", "Marks", "Point", "balance_curve", "daily", "marked_curve"]

DAY_NS = 86_400 * 10**9
UNREALIZED_DIGITS = 16


class Fill(NamedTuple):
    """One fill: its time, the signed quantity (buy > 0) as a mantissa at the size scale and
    the price as a mantissa at the price scale."""

    ts: int
    qty: int
    px: int


class Marks(NamedTuple):
    """One instrument: its bar close times and close mantissas (in order), its price and size
    scales, its multiplier and its fills in order."""

    ts: list[int]
    closes: list[int]
    price_scale: int
    size_scale: int
    multiplier: Decimal
    fills: list[Fill]


class Point(NamedTuple):
    """The curve at one bar close: the balance and the marked equity."""

    ts: int
    balance: Decimal
    equity: Decimal


class Cycle(NamedTuple):
    """One position cycle for the balance: each fill's time and commission (in the run's
    currency), its close time (None: still open) and its realized PnL (commissions included)."""

    commissions: list[tuple[int, Decimal]]
    ts_closed: int | None
    realized: Decimal


def balance_curve(capital: Decimal, cycles: list[Cycle]) -> list[tuple[int, Decimal]]:
    """The account balance after every change, in time order: each commission when paid, and
    each cycle's realized PnL (less the commissions already counted) when it closes. (The
    framework's recorded account states cannot serve: it updates their balance objects in
    place after recording them.)"""
    changes: dict[int, Decimal] = {}
    for cycle in cycles:
        for ts, commission in cycle.commissions:
            changes[ts] = changes.get(ts, Decimal(0)) - commission
        if cycle.ts_closed is not None:
            paid = sum((c for _, c in cycle.commissions), Decimal(0))
            changes[cycle.ts_closed] = changes.get(cycle.ts_closed, Decimal(0)) + cycle.realized + paid
    balance, curve = capital, []
    for ts in sorted(changes):
        balance += changes[ts]
        curve.append((ts, balance))
    return curve


class _Position:
    """One instrument's net position and its cost (mantissas at price scale + size scale)."""

    __slots__ = ("qty", "cost")

    def __init__(self) -> None:
        self.qty = 0
        self.cost: int | Fraction = 0

    def fill(self, qty: int, px: int) -> None:
        held = self.qty
        if held == 0 or (held > 0) == (qty > 0):
            self.cost += qty * px
        elif abs(qty) <= abs(held):
            self.cost = self.cost * Fraction(held + qty, held)
            if isinstance(self.cost, Fraction) and self.cost.denominator == 1:
                self.cost = int(self.cost)
        else:
            self.cost = (held + qty) * px
        self.qty = held + qty


def _pnl(unrealized: int | Fraction, scale: int, multiplier: Decimal) -> Decimal:
    """``multiplier * unrealized / 10**scale`` exactly, or rounded at UNREALIZED_DIGITS when a
    fraction of a cost share does not end."""
    if isinstance(unrealized, int):
        return multiplier * Decimal(unrealized).scaleb(-scale)
    value = unrealized * Fraction(multiplier) / 10**scale
    with localcontext() as context:
        context.prec = 80
        shown = Decimal(value.numerator) / Decimal(value.denominator)
        return shown.quantize(Decimal(1).scaleb(-UNREALIZED_DIGITS), rounding=ROUND_HALF_EVEN)


def marked_curve(capital: Decimal, balances: list[tuple[int, Decimal]], marks: list[Marks]) -> list[Point]:
    """The marked equity at every distinct bar close (see the module docs); ``balances`` is
    the total balance after each account change, in time order, and ``capital`` the balance
    before the first."""
    closes = sorted((ts, m, k) for m, mark in enumerate(marks) for k, ts in enumerate(mark.ts))
    positions = [_Position() for _ in marks]
    last = [0] * len(marks)
    next_fill = [0] * len(marks)
    b, balance = 0, capital
    curve: list[Point] = []
    with localcontext() as context:
        context.prec = 80  # exact sums: balances and unrealized PnLs have few digits each
        for i, (ts, m, k) in enumerate(closes):
            last[m] = marks[m].closes[k]
            if i + 1 < len(closes) and closes[i + 1][0] == ts:
                continue  # one point per close time, after every instrument's close at it
            while b < len(balances) and balances[b][0] <= ts:
                balance = balances[b][1]
                b += 1
            curve.append(Point(ts, balance, balance + _unrealized(ts, marks, positions, next_fill, last)))
    return curve


def _unrealized(
    ts: int, marks: list[Marks], positions: list[_Position], next_fill: list[int], last: list[int]
) -> Decimal:
    """The open positions' PnL at the latest closes, after every fill at or before ``ts``."""
    total = Decimal(0)
    for j, mark in enumerate(marks):
        position = positions[j]
        while next_fill[j] < len(mark.fills) and mark.fills[next_fill[j]].ts <= ts:
            fill = mark.fills[next_fill[j]]
            position.fill(fill.qty, fill.px)
            next_fill[j] += 1
        if position.qty:
            unrealized = position.qty * last[j] - position.cost
            total += _pnl(unrealized, mark.price_scale + mark.size_scale, mark.multiplier)
    return total


def daily(curve: list[Point]) -> list[Point]:
    """The last point of each UTC day (a close at midnight ends the day before it)."""
    days: list[Point] = []
    for point in curve:
        if days and (days[-1].ts - 1) // DAY_NS == (point.ts - 1) // DAY_NS:
            days[-1] = point
        else:
            days.append(point)
    return days
