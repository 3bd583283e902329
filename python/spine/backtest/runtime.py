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
   compared exactly in integers, the position is closed with a reduce-only market order;
3. else, flat: ``entry_long`` (if the direction allows longs) buys ``quantity`` at market,
   else ``entry_short`` (if it allows shorts) sells it.

At most one action per bar and instrument; none on the bar that exited. ``avg_open`` is the
exact quantity-weighted price of the entry's fills. Each action is recorded as a signal
``(instrument, close time, LONG|SHORT|FLAT, close mantissa, exit reason)``. The cancel flag
is polled every ``CANCEL_POLL`` bars; when set, :class:`Cancelled` is raised, which ends the
engine's run. Per bar there is no Python beyond the kernel call and the decision.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

import msgspec
from nautilus_trader.config import StrategyConfig
from nautilus_trader.model.data import BarType
from nautilus_trader.model.enums import OrderSide
from nautilus_trader.model.identifiers import InstrumentId
from nautilus_trader.trading.strategy import Strategy

import spine._core as _core
from spine.strategies.plan import RULE_NAMES, StrategyPlan

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
        "quantity",
        "pm",
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
        quantity: Any,
        gaps: list[int],
    ) -> None:
        self.iid, self.instrument, self.kernel, self.quantity = iid, instrument, kernel, quantity
        self.entry_long = bits.get("entry_long", 0)
        self.exit_long = bits.get("exit_long", 0)
        self.entry_short = bits.get("entry_short", 0)
        self.exit_short = bits.get("exit_short", 0)
        self.pm = 10 ** (FIXED_SCALE - int(instrument.price_precision))
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
            book = _Book(
                iid,
                instrument,
                kernel,
                bits,
                instrument.make_qty(Decimal(self.plan.quantity)),
                self._gap_closes.get(str(iid), []),
            )
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
        side = book.side
        if side:
            book.exposed += 1  # a position held into this bar: its exit bar counts too
            reason = None
            if fired & (book.exit_long if side > 0 else book.exit_short):
                reason = "EXITED"
            elif book.qty and (self._sl is not None or self._tp is not None):
                reason = self._stopped_out(side, bar.close.raw, book)
            if reason is not None:
                book.side = 0
                self.signals.append((str(book.iid), ts, "FLAT", close, reason))
                self.submit_order(
                    self.order_factory.market(
                        book.iid, OrderSide.SELL if side > 0 else OrderSide.BUY, book.quantity, reduce_only=True
                    )
                )
                return
        elif fired:
            if self._longs and fired & book.entry_long:
                book.side, direction, order_side = 1, "LONG", OrderSide.BUY
            elif self._shorts and fired & book.entry_short:
                book.side, direction, order_side = -1, "SHORT", OrderSide.SELL
            else:
                return
            book.px_qty = book.qty = 0
            book.exposed += 1
            self.signals.append((str(book.iid), ts, direction, close, None))
            self.submit_order(self.order_factory.market(book.iid, order_side, book.quantity))

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
        buy = event.order_side == OrderSide.BUY
        if (book.side > 0 and buy) or (book.side < 0 and not buy):  # an entry's fill
            book.px_qty += event.last_px.raw * event.last_qty.raw
            book.qty += event.last_qty.raw
