"""The EMA cross written by hand as a plain framework Strategy: the oracle the declarative
runtime is compared with. Never imports spine.

Its EMA mirrors the definition of Spine's kernel (``rust/core/src/features/kernels/average/
ema.rs`` and ``primitives/input.rs``), not the framework's ``ExponentialMovingAverage``: the input
is ``mantissa / 10^precision`` (one correctly rounded division, where the framework divides
its 1e16 raw value, which can differ in the last bit), ``alpha = 2 / (period + 1)``, seeded
with the first close, ``alpha * x + (1 - alpha) * prev``; the value is ABSENT until
``period`` closes were taken and is then the exact binary value rounded half to even at 8
decimals (the registry publishes price-level outputs at scale 8, whatever the instrument's
precision). Crosses compare those decimals exactly: CROSSES_ABOVE when ``prev_fast <=
prev_slow`` and ``fast > slow``, both bars with both values present.

Position logic, as the strategy document states it: with a position open, an exit cross
closes it (reduce-only market order) and, for LONG_SHORT, opens the opposite position at once
(the exit cross is the opposite entry); else flat, an entry cross opens ``quantity`` at market
(long on a cross above, short on a cross below when the direction allows). One action per bar.
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from nautilus_trader.config import StrategyConfig
from nautilus_trader.model.data import BarType
from nautilus_trader.model.enums import OrderSide
from nautilus_trader.trading.strategy import Strategy


class EmaMirror:
    """Spine's EMA kernel in plain Python floats (see the module docs)."""

    __slots__ = ("period", "alpha", "keep", "value", "seen", "quantum")

    #: The scale price-level feature outputs are published at.
    SCALE = 8

    def __init__(self, period: int, precision: int = SCALE) -> None:
        self.period = max(1, period)
        self.alpha = 2.0 / (float(self.period) + 1.0)
        self.keep = 1.0 - self.alpha
        self.value = 0.0
        self.seen = 0
        self.quantum = Decimal(1).scaleb(-self.SCALE)  # the output scale (the input's is `precision`)

    def update(self, x: float) -> None:
        self.value = x if self.seen == 0 else self.alpha * x + self.keep * self.value
        self.seen += 1

    def reset(self) -> None:
        self.value, self.seen = 0.0, 0

    def decimal(self) -> Decimal | None:
        if self.seen < self.period:
            return None
        return Decimal(self.value).quantize(self.quantum, rounding=ROUND_HALF_EVEN)


class HandEmaCrossConfig(StrategyConfig, frozen=True):
    bar_type: str
    fast: int
    slow: int
    quantity: str
    direction: str = "LONG_ONLY"


class HandEmaCross(Strategy):
    """The EMA cross, by hand (see the module docs)."""

    def __init__(self, config: HandEmaCrossConfig) -> None:
        super().__init__(config)
        self.bar_type = BarType.from_str(config.bar_type)
        self.iid = self.bar_type.instrument_id
        self.side = 0
        self.prev: tuple[Decimal | None, Decimal | None] = (None, None)
        self.longs = config.direction in ("LONG_ONLY", "LONG_SHORT")
        self.shorts = config.direction in ("SHORT_ONLY", "LONG_SHORT")

    def on_start(self) -> None:
        instrument = self.cache.instrument(self.iid)
        p = int(instrument.price_precision)
        self.divisor = float(10**p)
        self.pm = 10 ** (16 - p)
        self.fast = EmaMirror(self.config.fast, p)
        self.slow = EmaMirror(self.config.slow, p)
        self.qty = instrument.make_qty(Decimal(self.config.quantity))
        self.subscribe_bars(self.bar_type)

    def on_bar(self, bar: Any) -> None:
        x = (bar.close.raw // self.pm) / self.divisor
        self.fast.update(x)
        self.slow.update(x)
        fast, slow = self.fast.decimal(), self.slow.decimal()
        (pf, ps), self.prev = self.prev, (fast, slow)
        if None in (fast, slow, pf, ps):
            return
        above = pf <= ps and fast > slow  # type: ignore[operator]
        below = pf >= ps and fast < slow  # type: ignore[operator]
        if self.side > 0 and below or self.side < 0 and above:
            side, self.side = self.side, 0
            self.submit_order(
                self.order_factory.market(
                    self.iid, OrderSide.SELL if side > 0 else OrderSide.BUY, self.qty, reduce_only=True
                )
            )
            if self.longs and self.shorts:  # stop-and-reverse: the exit cross is the opposite entry
                self.side = -side
                self.submit_order(
                    self.order_factory.market(self.iid, OrderSide.SELL if side > 0 else OrderSide.BUY, self.qty)
                )
        elif self.side == 0 and self.longs and above:
            self.side = 1
            self.submit_order(self.order_factory.market(self.iid, OrderSide.BUY, self.qty))
        elif self.side == 0 and self.shorts and below:
            self.side = -1
            self.submit_order(self.order_factory.market(self.iid, OrderSide.SELL, self.qty))
