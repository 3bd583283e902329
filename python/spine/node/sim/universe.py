"""The simulated universe: spot pairs, perpetuals (with mark, index and funding) and an option
chain (with greeks) on one venue (``SIM`` unless configured), about fifty instruments by default. Everything is derived
from the configuration, so two nodes with one config list the same instruments in the same
order."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from nautilus_trader.model.currencies import USDT
from nautilus_trader.model.enums import CurrencyType, OptionKind
from nautilus_trader.model.identifiers import InstrumentId, Symbol, Venue
from nautilus_trader.model.instruments import CryptoOption, CryptoPerpetual, CurrencyPair, Instrument
from nautilus_trader.model.objects import Currency, Price, Quantity

__all__ = ["BASES", "SimUniverseConfig", "make_instruments", "reference_price"]

DAY_NS = 86_400 * 10**9
#: Base assets with a reference price (USDT) and price precision: the market walks around
#: these levels.
BASES: tuple[tuple[str, str, int], ...] = (
    ("BTC", "60000", 1),
    ("ETH", "3000", 2),
    ("SOL", "150", 3),
    ("BNB", "550", 2),
    ("XRP", "0.6", 4),
    ("ADA", "0.45", 4),
    ("DOGE", "0.12", 5),
    ("AVAX", "35", 3),
    ("DOT", "7", 3),
    ("LINK", "15", 3),
    ("LTC", "80", 2),
    ("ATOM", "9", 3),
)


@dataclass(frozen=True)
class SimUniverseConfig:
    """How many of each kind; the option chain is on the first base (BTC)."""

    #: The venue every instrument id names (``BTCUSDT.SIM``).
    venue: str = "SIM"
    spot: int = 12
    perpetuals: int = 12
    option_expiries: int = 2
    option_strikes: int = 6
    #: Expiries are this many days apart on a grid counted from ``epoch_ns`` (a fixed instant:
    #: the same expiries for every start within one period).
    expiry_days: int = 30
    epoch_ns: int = 1_767_225_600 * 10**9  # 2026-01-01T00:00:00Z
    #: When the venue starts (None: at the epoch). The chain lists the expiries after it, as a
    #: venue lists only options still alive: E1 is the next grid expiry, E2 the one after.
    start_ns: int | None = None

    def __post_init__(self) -> None:
        for name in ("spot", "perpetuals"):
            value = getattr(self, name)
            if not 0 <= value <= len(BASES):
                raise ValueError(f"{name}={value}: allowed 0..{len(BASES)}")
        if self.option_expiries < 0 or self.option_strikes < 0 or self.expiry_days < 1:
            raise ValueError("option_expiries and option_strikes must be >= 0, expiry_days >= 1")


def _currency(code: str) -> Currency:
    return Currency(code, 8, 0, code, CurrencyType.CRYPTO)


def reference_price(instrument: Instrument) -> Decimal:
    """The level the market walks around: the base's reference, or an option's premium
    scale (5% of its underlying's reference)."""
    code = instrument.base_currency.code if not isinstance(instrument, CryptoOption) else instrument.underlying.code
    level = next(Decimal(p) for b, p, _ in BASES if b == code)
    return level * Decimal("0.05") if isinstance(instrument, CryptoOption) else level


def _spot(venue: Venue, base: str, precision: int, ts: int) -> CurrencyPair:
    return CurrencyPair(
        **_traded(venue, f"{base}USDT", base, precision, ts),
        quote_currency=USDT,
        maker_fee=Decimal("0.001"),
        taker_fee=Decimal("0.001"),
    )


def _perpetual(venue: Venue, base: str, precision: int, ts: int) -> CryptoPerpetual:
    return CryptoPerpetual(
        **_traded(venue, f"{base}USDT-PERP", base, precision, ts),
        quote_currency=USDT,
        settlement_currency=USDT,
        is_inverse=False,
        margin_init=Decimal("0.05"),
        margin_maint=Decimal("0.025"),
        maker_fee=Decimal("0.0002"),
        taker_fee=Decimal("0.0005"),
    )


def _traded(venue: Venue, symbol: str, base: str, precision: int, ts: int) -> dict[str, Any]:
    """What a spot pair and a perpetual on ``base`` are listed with alike: ids, the base, a
    price step of one unit at ``precision``, a size step of 0.001, listed at ``ts``."""
    return {
        "instrument_id": InstrumentId(Symbol(symbol), venue),
        "raw_symbol": Symbol(symbol),
        "base_currency": _currency(base),
        "price_precision": precision,
        "size_precision": 3,
        "price_increment": Price(Decimal(1).scaleb(-precision), precision),
        "size_increment": Quantity.from_str("0.001"),
        "ts_event": ts,
        "ts_init": ts,
    }


def _options(config: SimUniverseConfig) -> list[CryptoOption]:
    base, level, _ = BASES[0]
    step = Decimal(level) * Decimal("0.05")
    options = []
    period = config.expiry_days * DAY_NS
    passed = 0 if config.start_ns is None else max(0, (config.start_ns - config.epoch_ns) // period)
    for e in range(config.option_expiries):
        expiry = config.epoch_ns + (passed + e + 1) * period
        for s in range(config.option_strikes):
            strike = Decimal(level) + (s - config.option_strikes // 2) * step
            for kind, letter in ((OptionKind.CALL, "C"), (OptionKind.PUT, "P")):
                symbol = f"{base}-E{e + 1}-{int(strike)}-{letter}"
                options.append(
                    CryptoOption(
                        instrument_id=InstrumentId(Symbol(symbol), Venue(config.venue)),
                        raw_symbol=Symbol(symbol),
                        underlying=_currency(base),
                        quote_currency=USDT,
                        settlement_currency=USDT,
                        is_inverse=False,
                        option_kind=kind,
                        strike_price=Price(strike, 1),
                        activation_ns=config.epoch_ns,
                        expiration_ns=expiry,
                        price_precision=1,
                        size_precision=2,
                        price_increment=Price.from_str("0.1"),
                        size_increment=Quantity.from_str("0.01"),
                        ts_event=config.epoch_ns,
                        ts_init=config.epoch_ns,
                    )
                )
    return options


def make_instruments(config: SimUniverseConfig | None = None) -> list[Instrument]:
    """The universe in a fixed order: spot pairs, perpetuals, then the option chain."""
    config = config or SimUniverseConfig()
    ts, venue = config.epoch_ns, Venue(config.venue)
    spot = [_spot(venue, b, p, ts) for b, _, p in BASES[: config.spot]]
    perps = [_perpetual(venue, b, p, ts) for b, _, p in BASES[: config.perpetuals]]
    return [*spot, *perps, *_options(config)]
