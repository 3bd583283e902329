"""A paper node's execution reads, from its framework cache as they are at the call (and the
operator's commands, passed on to :class:`~spine.node.paper.operator.Operator`): the
sandbox accounts (``svc.account_state_summary``) and the orders, fills and positions on the
node's venue, as the backtests write them (``spine.backtest.documents``: exact decimal
strings from the framework's values, never its floats), newest first."""

from __future__ import annotations

from typing import Any

from spine.backtest.documents import fill_document, fills_of, order_document, position_document, text
from spine.node.paper.operator import Operator

__all__ = ["OPERATOR", "PaperReads", "account_document"]

#: The wire strategy id of what no run placed (the operator's paper orders).
OPERATOR = "operator"


def account_document(account: Any) -> dict[str, Any]:
    """One account: its balances and margins by currency, exactly."""
    balances = sorted(account.balances().values(), key=lambda b: b.currency.code)
    margins = sorted(getattr(account, "margins", dict)().values(), key=lambda m: m.instrument_id.value)
    base = account.base_currency
    return {
        "version": "spine.v2",
        "schema_id": "svc.account_state_summary",
        "schema_version": 1,
        "account_id": account.id.value,
        "venue": account.id.get_issuer(),
        "account_type": account.type.name,
        "base_currency": None if base is None else base.code,
        "balances": [
            {"currency": b.currency.code, "total": text(b.total), "locked": text(b.locked), "free": text(b.free)}
            for b in balances
        ],
        "margins": [
            {
                "currency": m.currency.code,
                "initial": text(m.initial),
                "maintenance": text(m.maintenance),
                "instrument_id": m.instrument_id.value,
            }
            for m in margins
        ],
        "reported": bool(account.last_event.is_reported),
        "ts_event": str(account.last_event.ts_event),
    }


class PaperReads:
    """The execution reads of the framework node ``node`` trading ``venue``. ``strategies``
    maps a framework strategy id to the wire strategy id of the run that placed it (anything
    else is the operator's)."""

    def __init__(self, node: Any, venue: str, operator: Operator) -> None:
        from nautilus_trader.model.identifiers import Venue

        self._node, self._venue, self._operator = node, Venue(venue), operator
        self.strategies: dict[str, str] = {}

    # the operator's commands (see spine.node.paper.operator)

    def submit(self, body: Any) -> dict[str, Any]:
        return self._operator.submit(body)

    def cancel(self, body: Any) -> dict[str, Any]:
        return self._operator.cancel(body)

    def command(self, command_id: str) -> dict[str, Any] | None:
        return self._operator.results.get(command_id)

    def _strategy(self, framework_id: Any) -> str:
        return self.strategies.get(framework_id.value, OPERATOR)

    def _precision(self, instrument_id: Any) -> int:
        instrument = self._node.kernel.cache.instrument(instrument_id)
        return 8 if instrument is None else int(instrument.price_precision)

    def accounts(self) -> list[dict[str, Any]]:
        account = self._node.kernel.cache.account_for_venue(self._venue)
        return [] if account is None else [account_document(account)]

    def orders(self, instrument_id: str | None) -> list[dict[str, Any]]:
        orders = self._node.kernel.cache.orders(venue=self._venue, instrument_id=_id(instrument_id))
        ordered = sorted(orders, key=lambda o: (o.ts_init, o.client_order_id.value), reverse=True)
        return [order_document(o, self._strategy(o.strategy_id), self._precision(o.instrument_id)) for o in ordered]

    def fills(self, instrument_id: str | None) -> list[dict[str, Any]]:
        orders = self._node.kernel.cache.orders(venue=self._venue, instrument_id=_id(instrument_id))
        fills = [(fill, order) for order in orders for fill in fills_of(order)]
        fills.sort(key=lambda pair: (pair[0].ts_event, pair[0].trade_id.value), reverse=True)
        return [fill_document(fill, self._strategy(order.strategy_id)) for fill, order in fills]

    def positions(self, instrument_id: str | None) -> list[dict[str, Any]]:
        cache = self._node.kernel.cache
        positions = sorted(
            cache.positions(venue=self._venue, instrument_id=_id(instrument_id)),
            key=lambda p: (p.ts_last, p.id.value),
            reverse=True,
        )
        return [
            position_document(
                p, self._strategy(p.strategy_id), self._precision(p.instrument_id), _last_price(cache, p.instrument_id)
            )
            for p in positions
        ]


def _id(instrument_id: str | None) -> Any:
    from nautilus_trader.model.identifiers import InstrumentId

    return None if instrument_id is None else InstrumentId.from_str(instrument_id)


def _last_price(cache: Any, instrument_id: Any) -> Any:
    """What a position is marked at: the last trade, else the last quote's mid, else None."""
    from nautilus_trader.model.enums import PriceType

    for kind in (PriceType.LAST, PriceType.MID):
        price = cache.price(instrument_id, kind)
        if price is not None:
            return price
    return None
