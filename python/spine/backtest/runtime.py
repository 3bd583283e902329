"""The one framework strategy that executes every declarative strategy: a
:class:`DeclarativeStrategy` reads its :class:`~spine.strategies.plan.StrategyPlan` (as JSON
text in its config) and, per instrument, drives a ``spine._core.StrategyKernel`` built from
the plan's features and rules (in ``RULE_NAMES`` order) at the instrument's precisions.

Per closed bar of an instrument (the position logic of the strategy document):

1. the features take the bar (after a withheld span they restart first: ``mark_gap``) and the
   kernel answers which rules fired;
2. with a position open: if its exit rule fired (reason ``EXITED``), or the bar's close hits
   the stop loss (``STOP_LOSS``: long ``close <= avg_open * (1 - stop_loss)``, short
   ``close >= avg_open * (1 + stop_loss)``) or the take profit (``TAKE_PROFIT``: long
   ``close >= avg_open * (1 + take_profit)``, short ``close <= avg_open * (1 - take_profit)``),
   compared exactly in integers, the position is closed with a reduce-only market order; a
   LONG_SHORT strategy whose opposite entry rule fired on that bar also opens the opposite
   position at once (stop-and-reverse);
3. else, flat: ``entry_long`` (if the direction allows longs) buys at market, else
   ``entry_short`` (if it allows shorts) sells.

One action per bar and instrument: an exit, an entry, or a reversal (the exit and the
opposite entry together); no entry on the bar that exited otherwise. An entry's size is the
plan's ``quantity``, or its ``fraction`` of the equity (the venue's account balance plus its
open positions marked to their latest closes, the position being reversed included) or its
``notional``, over the close times the multiplier, floored to whole size steps; below one step
there is no entry. ``avg_open`` is the exact quantity-weighted price of the entry's fills.
Each action is recorded as a signal ``(instrument, close time, LONG|SHORT|FLAT, close
mantissa, exit reason)``. The cancel flag is polled every ``CANCEL_POLL`` bars; when set,
:class:`Cancelled` is raised, which ends the engine's run. Per bar there is no Python beyond
the kernel call and the decision.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal, localcontext
from typing import Any

import msgspec
from nautilus_trader.config import StrategyConfig
from nautilus_trader.model.data import BarType
from nautilus_trader.model.enums import OrderSide
from nautilus_trader.model.identifiers import InstrumentId
from nautilus_trader.trading.strategy import Strategy

import spine._core as _core
from spine.strategies.plan import RULE_NAMES, StrategyPlan
from spine.strategies.values import QUANTITY_MAX

__all__ = ["CANCEL_POLL", "Cancelled", "DeclarativeConfig", "DeclarativeStrategy", "Signal", "kernel_for"]

CANCEL_POLL = 64
FIXED_SCALE = 16

#: ``(instrument_id, ts_event, direction, close mantissa, reason or None)``.
Signal = tuple[str, int, str, int, str | None]


class Cancelled(Exception):
    """Raised from ``on_bar`` when the cancel flag is set: it ends ``engine.run()``."""


def kernel_for(plan: StrategyPlan, price_scale: int, size_scale: int) -> tuple[_core.StrategyKernel, dict[str, int]]:
    """A fresh kernel for one instrument, and each declared rule's bit in its answer."""
    names = [name for name in RULE_NAMES if name in plan.rules]
    kernel = _core.StrategyKernel(
        features=[(f.feature_id, f.implementation, dict(f.parameters)) for f in plan.features],
        rules=[(name, plan.rules[name]) for name in names],
        price_scale=price_scale,
        size_scale=size_scale,
    )
    return kernel, {name: 1 << i for i, name in enumerate(names)}


def _fraction(text: str | None) -> tuple[int, int] | None:
    """A decimal fraction as ``(mantissa, 10^scale)``, exact."""
    if text is None:
        return None
    sign, digits, exponent = Decimal(text).as_tuple()
    scale = max(0, -int(exponent))
    return int(Decimal(text).scaleb(scale)), 10**scale


class DeclarativeConfig(StrategyConfig, frozen=True):  # type: ignore[misc,call-arg]
    """``plan``: the StrategyPlan as JSON text; ``bar_types``: the bar type fed per instrument
    (plan order); ``gap_closes``: per instrument, the closes of the bars that follow a withheld
    span."""

    plan: str
    bar_types: list[str]
    gap_closes: dict[str, list[int]] = {}


class _Book:
    """One instrument's state."""

    __slots__ = (
        "iid",
        "instrument",
        "kernel",
        "entry_long",
        "exit_long",
        "entry_short",
        "exit_short",
        "fixed",
        "held",
        "entry_id",
        "pm",
        "close_raw",
        "side",
        "px_qty",
        "qty",
        "gaps",
        "next_gap",
        "bars",
        "exposed",
        "rows",
    )

    def __init__(
        self,
        iid: InstrumentId,
        instrument: Any,
        kernel: _core.StrategyKernel,
        bits: dict[str, int],
        fixed: Any,
        gaps: list[int],
    ) -> None:
        self.iid, self.instrument, self.kernel = iid, instrument, kernel
        self.fixed = fixed  # the plan's fixed Quantity; None: sized at each entry
        self.held: Any = None  # the open position's entry Quantity (closed with it)
        self.entry_id: Any = None  # the entry order's client order id (its fills set the cost)
        self.entry_long = bits.get("entry_long", 0)
        self.exit_long = bits.get("exit_long", 0)
        self.entry_short = bits.get("entry_short", 0)
        self.exit_short = bits.get("exit_short", 0)
        self.pm = 10 ** (FIXED_SCALE - int(instrument.price_precision))
        self.close_raw = 0  # the latest close, raw (10^-16 units)
        self.side = 0  # +1 long, -1 short, 0 flat (as decided; fills follow at once)
        self.px_qty = 0  # sum of entry fill price raw * quantity raw
        self.qty = 0  # sum of entry fill quantity raw
        self.gaps = sorted(gaps, reverse=True)
        self.next_gap = self.gaps.pop() if self.gaps else -1
        self.bars = 0
        self.exposed = 0
        #: The fed bars as ``(ts_event, open, high, low, close, volume)`` mantissa rows, when the
        #: engine gave them (:meth:`DeclarativeStrategy.feed`): read by position, not from the bar.
        self.rows: list[tuple[int, int, int, int, int, int]] = []


class DeclarativeStrategy(Strategy):  # type: ignore[misc]
    """Executes a StrategyPlan (see the module docs). After a run, ``signals`` holds the
    actions taken, ``bars_seen`` and ``bars_exposed`` the bars taken and those from each
    entry's bar to its exit's bar (or the last bar), both included. ``cancelled`` (set before
    the run) is the cancel flag."""

    def __init__(self, config: DeclarativeConfig) -> None:
        super().__init__(config)
        self.plan = msgspec.json.decode(config.plan, type=StrategyPlan)
        self._bar_types = [BarType.from_str(t) for t in config.bar_types]
        self._gap_closes = config.gap_closes
        self.cancelled: Callable[[], bool] = lambda: False
        self.signals: list[Signal] = []
        self._books: dict[Any, _Book] = {}
        self._by_iid: dict[Any, _Book] = {}
        self._polled = 0
        self._feeds: dict[str, list[tuple[int, int, int, int, int, int]]] = {}
        sides = {"LONG_ONLY": (True, False), "SHORT_ONLY": (False, True), "LONG_SHORT": (True, True)}
        self._longs, self._shorts = sides[self.plan.direction]
        self._reverses = self.plan.direction == "LONG_SHORT"
        self._fraction = None if self.plan.fraction is None else Decimal(self.plan.fraction)
        self._notional = Decimal(self.plan.notional or 0)
        self._sl = _fraction(self.plan.stop_loss)
        self._tp = _fraction(self.plan.take_profit)

    @property
    def bars_seen(self) -> int:
        return sum(b.bars for b in self._books.values())

    @property
    def bars_exposed(self) -> int:
        return sum(b.exposed for b in self._books.values())

    def feed(self, bar_type: str, rows: list[tuple[int, int, int, int, int, int]]) -> None:
        """The mantissa rows of the bars the engine will deliver for ``bar_type``, in order
        (before the run): ``on_bar`` reads them instead of converting the bar's prices, and
        falls back to the bar whenever a row does not match its close time."""
        self._feeds[bar_type] = rows

    def on_start(self) -> None:
        for bar_type in self._bar_types:
            iid = bar_type.instrument_id
            instrument = self.cache.instrument(iid)
            kernel, bits = kernel_for(self.plan, int(instrument.price_precision), int(instrument.size_precision))
            fixed = None if self.plan.quantity is None else instrument.make_qty(Decimal(self.plan.quantity))
            book = _Book(iid, instrument, kernel, bits, fixed, self._gap_closes.get(str(iid), []))
            book.rows = self._feeds.get(str(bar_type), [])
            self._books[bar_type] = book
            self._by_iid[iid] = book
            self.subscribe_bars(bar_type)

    def on_bar(self, bar: Any) -> None:
        self._polled += 1
        if self._polled >= CANCEL_POLL:
            self._polled = 0
            if self.cancelled():
                raise Cancelled(f"cancelled at bar close {bar.ts_event}")
        book = self._books[bar.bar_type]
        ts = bar.ts_event
        if ts == book.next_gap:
            book.kernel.mark_gap()
            book.next_gap = book.gaps.pop() if book.gaps else -1
        k = book.bars
        book.bars = k + 1
        if k < len(book.rows) and book.rows[k][0] == ts:
            row = book.rows[k]
            close = row[4]
            fired = book.kernel.update(*row)
        else:
            pm = book.pm
            close = bar.close.raw // pm
            fired = book.kernel.update(
                ts,
                bar.open.raw // pm,
                bar.high.raw // pm,
                bar.low.raw // pm,
                close,
                bar.volume.raw // 10 ** (FIXED_SCALE - bar.volume.precision),
            )
        book.close_raw = close * book.pm
        side = book.side
        if side:
            book.exposed += 1  # a position held into this bar: its exit bar counts too
            reason = None
            if fired & (book.exit_long if side > 0 else book.exit_short):
                reason = "EXITED"
            elif book.qty and (self._sl is not None or self._tp is not None):
                reason = self._stopped_out(side, book.close_raw, book)
            if reason is not None:
                # Stop-and-reverse: sized on the equity with this position still marked.
                again = self._reverses and fired & (book.entry_short if side > 0 else book.entry_long)
                size = self._size(book, close) if again else None
                book.side = 0
                self.signals.append((str(book.iid), ts, "FLAT", close, reason))
                exit_side = OrderSide.SELL if side > 0 else OrderSide.BUY
                self.submit_order(self.order_factory.market(book.iid, exit_side, book.held, reduce_only=True))
                book.held = None
                if size is not None:
                    self._enter(book, -side, size, ts, close)
        elif fired:
            if self._longs and fired & book.entry_long:
                direction = 1
            elif self._shorts and fired & book.entry_short:
                direction = -1
            else:
                return
            if (size := self._size(book, close)) is not None:
                book.exposed += 1
                self._enter(book, direction, size, ts, close)

    def _enter(self, book: _Book, direction: int, size: Any, ts: int, close: int) -> None:
        order = self.order_factory.market(book.iid, OrderSide.BUY if direction > 0 else OrderSide.SELL, size)
        book.side, book.held, book.entry_id = direction, size, order.client_order_id
        book.px_qty = book.qty = 0
        self.signals.append((str(book.iid), ts, "LONG" if direction > 0 else "SHORT", close, None))
        self.submit_order(order)

    def _size(self, book: _Book, close: int) -> Any:
        """The entry's Quantity at ``close`` (a mantissa): the plan's fixed quantity, or its
        fraction of the equity (or its notional) over the close times the multiplier, floored to
        whole size steps; None below one step (no entry)."""
        if book.fixed is not None:
            return book.fixed
        instrument = book.instrument
        if self._fraction is not None:
            budget = self._equity(instrument) * self._fraction
        else:
            budget = self._notional
        unit = Decimal(close).scaleb(-int(instrument.price_precision)) * instrument.multiplier.as_decimal()
        if budget <= 0 or unit <= 0:
            return None
        with localcontext() as context:
            context.prec = 60
            steps = int((budget / unit).scaleb(int(instrument.size_precision)))  # truncates: floors when positive
        steps = min(steps, int(QUANTITY_MAX.scaleb(int(instrument.size_precision))))
        return instrument.make_qty(Decimal(steps).scaleb(-int(instrument.size_precision))) if steps > 0 else None

    def _equity(self, instrument: Any) -> Decimal:
        """The instrument's venue account balance plus the open positions on that venue marked
        to their latest closes."""
        venue = instrument.id.venue
        currency = instrument.quote_currency
        equity: Decimal = self.portfolio.account(venue).balance_total(currency).as_decimal()
        for book in self._books.values():
            if book.side and book.qty and book.iid.venue == venue:
                raw = book.side * (book.close_raw * book.qty - book.px_qty)
                equity += Decimal(raw).scaleb(-2 * FIXED_SCALE) * book.instrument.multiplier.as_decimal()
        return equity

    def _stopped_out(self, side: int, close_raw: int, book: _Book) -> str | None:
        """Whether the close hits the stop loss or take profit, exactly: ``close * qty *
        10^k`` against ``sum(px * qty) * (10^k -+ m)`` for a fraction ``m / 10^k``."""
        lhs, paid = close_raw * book.qty, book.px_qty
        if self._sl is not None:
            m, one = self._sl
            if (lhs * one <= paid * (one - m)) if side > 0 else (lhs * one >= paid * (one + m)):
                return "STOP_LOSS"
        if self._tp is not None:
            m, one = self._tp
            if (lhs * one >= paid * (one + m)) if side > 0 else (lhs * one <= paid * (one - m)):
                return "TAKE_PROFIT"
        return None

    def on_order_filled(self, event: Any) -> None:
        book = self._by_iid[event.instrument_id]
        if event.client_order_id == book.entry_id:  # an entry's fill: the position's cost
            book.px_qty += event.last_px.raw * event.last_qty.raw
            book.qty += event.last_qty.raw
