"""Framework objects after a run as wire documents (``svc.order_summary``,
``svc.fill_summary``, ``svc.position_summary`` at schema_version 2), with prices, sizes and
money as exact decimal strings from the framework's own ``Price``/``Quantity``/``Money``
values, never its floats.

The framework keeps some averages as floats (an order's ``avg_px``, a position's
``avg_px_open``/``avg_px_close``); they are recomputed from the fills instead: the
quantity-weighted average of the fill prices, shown at the instrument's price precision when
exact there, else rounded half to even at the price precision plus ``AVG_EXTRA_DIGITS``.
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal, localcontext
from typing import Any

__all__ = ["AVG_EXTRA_DIGITS", "fill_document", "fills_of", "order_document", "position_document", "text"]

AVG_EXTRA_DIGITS = 4
_TAGS = {"version": "spine.v2", "schema_version": 2}


def text(value: Any) -> str:
    """A framework Price/Quantity/Money (or a Decimal) as an exact decimal string: its own
    precision kept, no exponent, no negative zero."""
    if isinstance(value, Decimal):
        shown = format(value, "f")
    else:  # Price, Quantity: "1.000"; Money: "0.09955000 USDT" (its currency's precision)
        shown = str(value).partition(" ")[0]
    return shown[1:] if shown.startswith("-") and Decimal(shown) == 0 else shown


def average(fills: list[Any], precision: int) -> str | None:
    """The quantity-weighted average fill price (see the module docs); None without fills."""
    quantity = sum((f.last_qty.as_decimal() for f in fills), Decimal(0))
    if not fills or quantity == 0:
        return None
    with localcontext() as context:
        context.prec = 80
        mean = sum((f.last_px.as_decimal() * f.last_qty.as_decimal() for f in fills), Decimal(0)) / quantity
    exact = mean.quantize(Decimal(1).scaleb(-precision))
    if exact == mean:
        return text(exact)
    return text(mean.quantize(Decimal(1).scaleb(-(precision + AVG_EXTRA_DIGITS)), rounding=ROUND_HALF_EVEN))


def fills_of(order: Any) -> list[Any]:
    from nautilus_trader.model.events import OrderFilled

    return [e for e in order.events if isinstance(e, OrderFilled)]


def order_document(order: Any, strategy_id: str, precision: int) -> dict[str, Any]:
    from nautilus_trader.model.enums import time_in_force_to_str

    price = getattr(order, "price", None) if order.has_price else None
    trigger = getattr(order, "trigger_price", None) if order.has_trigger_price else None
    return {
        **_TAGS,
        "schema_id": "svc.order_summary",
        "client_order_id": order.client_order_id.value,
        "venue_order_id": None if order.venue_order_id is None else order.venue_order_id.value,
        "instrument_id": order.instrument_id.value,
        "strategy_id": strategy_id,
        "side": order.side_string(),
        "order_type": order.type_string(),
        "time_in_force": time_in_force_to_str(order.time_in_force),
        "status": order.status_string(),
        "quantity": text(order.quantity),
        "filled_qty": text(order.filled_qty),
        "price": None if price is None else text(price),
        "trigger_price": None if trigger is None else text(trigger),
        "avg_px": average(fills_of(order), precision),
        "ts_init": str(order.ts_init),
        "ts_last": str(order.ts_last),
    }


def fill_document(fill: Any, strategy_id: str) -> dict[str, Any]:
    from nautilus_trader.model.enums import liquidity_side_to_str, order_side_to_str

    return {
        **_TAGS,
        "schema_id": "svc.fill_summary",
        "trade_id": fill.trade_id.value,
        "client_order_id": fill.client_order_id.value,
        "venue_order_id": fill.venue_order_id.value,
        "instrument_id": fill.instrument_id.value,
        "strategy_id": strategy_id,
        "side": order_side_to_str(fill.order_side),
        "last_qty": text(fill.last_qty),
        "last_px": text(fill.last_px),
        "commission": text(fill.commission),
        "commission_currency": fill.commission.currency.code,
        "liquidity_side": liquidity_side_to_str(fill.liquidity_side),
        "ts_event": str(fill.ts_event),
    }


def position_document(position: Any, strategy_id: str, precision: int, last_price: Any | None) -> dict[str, Any]:
    """A position (or a closed cycle's snapshot). ``unrealized_pnl``: "0" when flat, marked at
    ``last_price`` (the instrument's last close) when open, null without one."""
    from nautilus_trader.model.enums import OrderSide, position_side_to_str

    fills = list(position.events)
    opening = OrderSide.BUY if position.entry == OrderSide.BUY else OrderSide.SELL
    opens = [f for f in fills if f.order_side == opening]
    closes = [f for f in fills if f.order_side != opening]
    side = position_side_to_str(position.side)
    if side == "FLAT":
        unrealized: str | None = "0"
    elif last_price is None:
        unrealized = None
    else:
        unrealized = text(position.unrealized_pnl(last_price))
    return {
        **_TAGS,
        "schema_id": "svc.position_summary",
        "position_id": position.id.value,
        "instrument_id": position.instrument_id.value,
        "strategy_id": strategy_id,
        "side": side,
        "quantity": text(position.quantity),
        "avg_px_open": average(opens, precision) or "0",
        "avg_px_close": average(closes, precision),
        "realized_pnl": text(position.realized_pnl) if position.realized_pnl is not None else "0",
        "unrealized_pnl": unrealized,
        "currency": position.settlement_currency.code,
        "ts_opened": str(position.ts_opened),
        "ts_closed": str(position.ts_closed) if side == "FLAT" else None,
        "ts_last": str(position.ts_last),
    }
