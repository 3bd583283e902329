"""Test catalogs for backtests, laid out as a node writes them: ``<dir>/external`` and
``<dir>/internal`` ParquetDataCatalog roots holding a spot instrument and its 1-minute bars
(``SYMBOL.VENUE-1-MINUTE-LAST-<CHANNEL>``). Never imports spine; built with the framework
directly. Prices follow a seeded random walk at the instrument's precision."""

from __future__ import annotations

import random
from collections.abc import Iterable
from decimal import Decimal
from pathlib import Path

from nautilus_trader.model.currencies import USDT
from nautilus_trader.model.data import Bar, BarType
from nautilus_trader.model.enums import CurrencyType
from nautilus_trader.model.identifiers import InstrumentId, Symbol, Venue
from nautilus_trader.model.instruments import CurrencyPair
from nautilus_trader.model.objects import Currency, Price, Quantity
from nautilus_trader.persistence.catalog import ParquetDataCatalog

MINUTE_NS = 60_000_000_000
#: 2024-01-01T00:00:00Z
EPOCH_2024 = 1_704_067_200_000_000_000


def spot(instrument_id: str, price_precision: int = 2, size_precision: int = 3) -> CurrencyPair:
    """A spot pair quoted in USDT with 0.1% maker and taker fees, as the sim venue lists it."""
    iid = InstrumentId.from_str(instrument_id)
    base = iid.symbol.value.removesuffix("USDT")
    return CurrencyPair(
        instrument_id=iid,
        raw_symbol=Symbol(iid.symbol.value),
        base_currency=Currency(base, 8, 0, base, CurrencyType.CRYPTO),
        quote_currency=USDT,
        price_precision=price_precision,
        size_precision=size_precision,
        price_increment=Price(Decimal(1).scaleb(-price_precision), price_precision),
        size_increment=Quantity(Decimal(1).scaleb(-size_precision), size_precision),
        ts_event=0,
        ts_init=0,
        maker_fee=Decimal("0.001"),
        taker_fee=Decimal("0.001"),
    )


def walk_bars(
    instrument: CurrencyPair,
    channel: str,
    count: int,
    *,
    seed: int = 7,
    first_close: int | None = None,
    level: str = "100",
    skip: Iterable[int] = (),
    step: str = "1-MINUTE",
) -> list[Bar]:
    """``count`` bars of ``step`` (``1-MINUTE`` or ``1-DAY``) closing one step apart from
    ``first_close`` (default: one step after 2024-01-01); the bar indexes in ``skip`` are left
    out (a gap). Mantissas are integers, so every price is exact."""
    step_ns = {"1-MINUTE": MINUTE_NS, "1-DAY": 1440 * MINUTE_NS}[step]
    first_close = EPOCH_2024 + step_ns if first_close is None else first_close
    rng = random.Random(seed)
    p, s = instrument.price_precision, instrument.size_precision
    bar_type = BarType.from_str(f"{instrument.id}-{step}-LAST-{channel}")
    close = int(Decimal(level).scaleb(p))
    tick = max(1, close // 2000)
    skipped = set(skip)
    bars = []
    for i in range(count):
        open_ = close
        close = max(tick, open_ + rng.randint(-3, 3) * tick)
        high = max(open_, close) + rng.randint(0, 2) * tick
        low = max(1, min(open_, close) - rng.randint(0, 2) * tick)
        volume = rng.randint(1, 5000) * 10**s // 10
        if i in skipped:
            continue
        ts = first_close + i * step_ns
        bars.append(
            Bar(
                bar_type,
                _price(open_, p),
                _price(high, p),
                _price(low, p),
                _price(close, p),
                Quantity.from_raw(volume * 10 ** (16 - s), s),
                ts,
                ts,
            )
        )
    return bars


def _price(mantissa: int, precision: int) -> Price:
    return Price.from_raw(mantissa * 10 ** (16 - precision), precision)


def write_catalog(
    node_dir: Path, instruments: list[CurrencyPair], bars: dict[str, list[Bar]], channel: str = "EXTERNAL"
) -> Path:
    """Write ``instruments`` and each instrument's ``bars`` (by instrument id) into
    ``<node_dir>/catalog/<channel lower>``; returns ``<node_dir>/catalog``."""
    root = node_dir / "catalog" / channel.lower()
    catalog = ParquetDataCatalog(str(root))
    catalog.write_data(instruments)
    for instrument in instruments:
        if bars.get(str(instrument.id)):
            catalog.write_data(bars[str(instrument.id)])
    return node_dir / "catalog"


__all__ = ["EPOCH_2024", "MINUTE_NS", "spot", "walk_bars", "write_catalog", "Venue"]
