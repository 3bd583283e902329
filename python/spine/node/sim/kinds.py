"""Custom data kinds the framework has no type for: option greeks and liquidations. Fields are
exact decimal strings (the venue's values, carried as given), so the node projects them to the
wire without a float in between.

(No ``from __future__ import annotations`` here: ``customdataclass`` reads the annotations as
types.)
"""

from nautilus_trader.core.data import Data
from nautilus_trader.model.custom import customdataclass
from nautilus_trader.model.identifiers import InstrumentId

__all__ = ["Liquidation", "OptionGreeks"]


@customdataclass
class OptionGreeks(Data):
    instrument_id: InstrumentId = InstrumentId.from_str("X.SIM")
    delta: str = "0"
    gamma: str = "0"
    vega: str = "0"
    theta: str = "0"
    rho: str = "0"
    iv: str = "0"
    underlying_price: str = "0"


@customdataclass
class Liquidation(Data):
    instrument_id: InstrumentId = InstrumentId.from_str("X.SIM")
    side: str = "BUY"
    price: str = "0"
    quantity: str = "0"
