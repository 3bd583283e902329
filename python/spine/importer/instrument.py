"""The instrument definition an import writes beside its bars.

Which kind fits: a symbol ending in the quote currency (``--currency``, default USD) with a
base before it (one trailing ``-``, ``_`` or ``.`` separator dropped: ``BTC-USD``) is a
``CurrencyPair`` BASE/QUOTE; anything else is an ``Equity`` priced in that currency. An
Equity trades whole units in NautilusTrader (size precision 0), so its volumes must be whole.
Known currency codes are the framework's own; an unknown code becomes a crypto-type currency
of precision 8 (the framework's own default for codes it does not know). Fees and margins are
zero: a backtest's fee model is chosen by the run, not by the data.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from nautilus_trader.model.enums import CurrencyType
from nautilus_trader.model.identifiers import InstrumentId, Symbol
from nautilus_trader.model.instruments import CurrencyPair, Equity
from nautilus_trader.model.objects import Currency, Price, Quantity

__all__ = ["make_instrument", "pair_base"]

_SEPARATORS = "-_."


def pair_base(symbol: str, quote: str) -> str | None:
    """The base currency code when ``symbol`` reads BASE+QUOTE, else None."""
    if not symbol.endswith(quote) or len(symbol) == len(quote):
        return None
    base = symbol[: -len(quote)]
    if base[-1] in _SEPARATORS:
        base = base[:-1]
    return base if base.isalnum() and base[:1].isalpha() else None


def _currency(code: str) -> Currency:
    known = Currency.from_str(code, strict=True)
    return known if known is not None else Currency(code, 8, 0, code, CurrencyType.CRYPTO)


def make_instrument(instrument_id: str, quote: str, price_precision: int, size_precision: int) -> Any:
    """The instrument at the precisions the bars were parsed at (ts 0: a definition, not an
    event, so a re-import rewrites the same file)."""
    iid = InstrumentId.from_str(instrument_id)
    symbol = iid.symbol.value
    price_increment = Price(Decimal(1).scaleb(-price_precision), price_precision)
    base = pair_base(symbol, quote)
    if base is None:
        if size_precision != 0:
            raise ValueError(f"an Equity has size precision 0, not {size_precision}")
        return Equity(
            instrument_id=iid,
            raw_symbol=Symbol(symbol),
            currency=_currency(quote),
            price_precision=price_precision,
            price_increment=price_increment,
            lot_size=Quantity.from_int(1),
            ts_event=0,
            ts_init=0,
        )
    return CurrencyPair(
        instrument_id=iid,
        raw_symbol=Symbol(symbol),
        base_currency=_currency(base),
        quote_currency=_currency(quote),
        price_precision=price_precision,
        size_precision=size_precision,
        price_increment=price_increment,
        size_increment=Quantity(Decimal(1).scaleb(-size_precision), size_precision),
        ts_event=0,
        ts_init=0,
        maker_fee=Decimal(0),
        taker_fee=Decimal(0),
    )
