"""The operator's paper orders on a paper node: a framework strategy of its own places them
(orders need one), and each command (an order, a cancel) is followed through the framework's
order events to its ``svc.command_result``.

A command's id is ``identity("command_id", ...)`` of its ``svc.order_command`` (or
``svc.cancel_command``) without the id; its ``ts_init`` makes every command its own.
Everything here runs on the node's loop (the HTTP handlers do), and nothing raises into the
framework: an exception in a strategy's handler ends the whole process."""

from __future__ import annotations

import logging
import time
from decimal import Decimal
from typing import Any

from nautilus_trader.config import StrategyConfig
from nautilus_trader.model.enums import OrderSide, TimeInForce
from nautilus_trader.model.events import (
    OrderAccepted,
    OrderCanceled,
    OrderCancelRejected,
    OrderDenied,
    OrderExpired,
    OrderFilled,
    OrderRejected,
)
from nautilus_trader.model.identifiers import ClientOrderId, InstrumentId
from nautilus_trader.trading.strategy import Strategy

from spine import identity
from spine.node.view import OrderRefused

__all__ = ["OPERATOR_STRATEGY", "Operator"]

log = logging.getLogger("spine.node.paper")

#: The framework's id of the operator's strategy (``OPERATOR-OP``), and its order id tag.
OPERATOR_STRATEGY = "OPERATOR"
_TAG = "OP"


class Operator(Strategy):
    def __init__(self) -> None:
        super().__init__(StrategyConfig(strategy_id=OPERATOR_STRATEGY, order_id_tag=_TAG))
        #: command id -> its result document; client order id -> the commands waiting on it.
        self.results: dict[str, dict[str, Any]] = {}
        self._waiting: dict[str, list[str]] = {}

    # commands

    def submit(self, body: Any) -> dict[str, Any]:
        """Place the order ``body`` (an ``OrderBody``); its command's result."""
        command = _command(
            "svc.order_command",
            instrument_id=body.instrument_id,
            side=body.side,
            order_type=body.order_type,
            quantity=body.quantity,
            price=body.price,
            time_in_force=body.time_in_force,
        )
        instrument = self._instrument(body.instrument_id)
        quantity = _exact(instrument.make_qty, body.quantity, "quantity", instrument.size_precision)
        side = OrderSide.BUY if body.side == "BUY" else OrderSide.SELL
        tif = TimeInForce[body.time_in_force]
        if body.order_type == "MARKET":
            order = self.order_factory.market(instrument.id, side, quantity, time_in_force=tif)
        else:
            price = _exact(instrument.make_price, body.price, "price", instrument.price_precision)
            order = self.order_factory.limit(instrument.id, side, quantity, price, time_in_force=tif)
        result = self._track(command, "ORDER", order.client_order_id.value)
        self.submit_order(order)
        return result

    def cancel(self, body: Any) -> dict[str, Any]:
        """Cancel the open order ``body.client_order_id`` (a ``CancelBody``); its command's result."""
        command = _command("svc.cancel_command", instrument_id=body.instrument_id, client_order_id=body.client_order_id)
        order = self.cache.order(ClientOrderId(body.client_order_id))
        if order is None or order.instrument_id.value != body.instrument_id:
            raise OrderRefused("NOT_FOUND", f"no paper order {body.client_order_id} on {body.instrument_id}")
        if not order.is_open:
            raise OrderRefused("CONFLICT", f"order {body.client_order_id} is {order.status_string()}, not open")
        result = self._track(command, "CANCEL", body.client_order_id)
        self.cancel_order(order)
        return result

    def _instrument(self, instrument_id: str) -> Any:
        instrument = self.cache.instrument(InstrumentId.from_str(instrument_id))
        if instrument is None:
            raise OrderRefused("NOT_FOUND", f"{instrument_id} is not an instrument of this node")
        return instrument

    def _track(self, command: dict[str, Any], kind: str, client_order_id: str) -> dict[str, Any]:
        result = {
            "version": "spine.v2",
            "schema_id": "svc.command_result",
            "schema_version": 1,
            "command_id": command["command_id"],
            "command": kind,
            "state": "PENDING",
            "client_order_id": client_order_id,
            "detail": None,
            "ts_event": str(time.time_ns()),
        }
        self.results[command["command_id"]] = result
        self._waiting.setdefault(client_order_id, []).append(command["command_id"])
        return result

    # the framework's order events

    def on_order_event(self, event: Any) -> None:
        try:
            self._follow(event)
        except Exception:  # noqa: BLE001 - never into the framework (module docs)
            log.exception("paper order event %s not followed", type(event).__name__)

    def _follow(self, event: Any) -> None:
        for command_id in self._waiting.get(event.client_order_id.value, ()):
            result = self.results[command_id]
            state, detail = _state(result["command"], event, self.cache.order(event.client_order_id))
            if state is not None and result["state"] not in ("COMPLETED", "REJECTED", "FAILED"):
                result.update(state=state, detail=detail, ts_event=str(event.ts_event))


def _state(command: str, event: Any, order: Any) -> tuple[str | None, str | None]:
    """What ``event`` makes of a command on its order: None where it changes nothing."""
    if isinstance(event, OrderDenied | OrderRejected):
        return "REJECTED", str(event.reason)
    if command == "CANCEL":
        if isinstance(event, OrderCancelRejected):
            return "REJECTED", str(event.reason)
        return ("COMPLETED", None) if isinstance(event, OrderCanceled) else (None, None)
    if isinstance(event, OrderAccepted):
        return "ACCEPTED", None
    if isinstance(event, OrderFilled):
        return ("COMPLETED", None) if order is not None and order.is_closed else ("ACCEPTED", None)
    if isinstance(event, OrderCanceled | OrderExpired):
        return "COMPLETED", None
    return None, None


def _command(schema_id: str, **fields: Any) -> dict[str, Any]:
    """The command document (its tags, the fields, ``paper`` and ``confirmed``, its id)."""
    body = {"version": "spine.v2", "schema_id": schema_id, "schema_version": 1, **fields}
    body |= {"paper": True, "confirmed": True, "ts_init": str(time.time_ns())}
    return {**body, "command_id": identity("command_id", body)}


def _exact(make: Any, text: str, what: str, precision: int) -> Any:
    """``text`` as the instrument's value, refused when it has more decimals than the
    instrument holds (never rounded)."""
    value = Decimal(text)
    if -value.as_tuple().exponent > precision or value <= 0:  # type: ignore[operator]
        raise OrderRefused(
            "INVALID_QUANTITY" if what == "quantity" else "INVALID_BODY",
            f"{what} {text}: allowed above 0, at most {precision} decimal places for this instrument",
        )
    return make(value)
