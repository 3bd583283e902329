"""The node's durable 1-minute series: one ``spine._core.Series`` per instrument and channel
(EXTERNAL venue candles and INTERNAL bars from trades are never mixed), each with its
incremental fold to 5m..1d. Bars arrive as framework ``Bar`` objects and are taken as exact
mantissas at the instrument's precisions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from nautilus_trader.model.data import Bar, BarType
from nautilus_trader.model.objects import Price, Quantity

from spine._core import Series
from spine.wire.bar_types import instrument_of

__all__ = ["FIXED", "SeriesBook", "framework_bars", "mantissas"]

FIXED = 16  # the framework's raw scale in this build (FIXED_PRECISION=16)


def mantissas(bar: Any, price_precision: int, size_precision: int) -> tuple[int, int, int, int, int, int]:
    """``(ts_event, open, high, low, close, volume)`` as integers at the precisions."""
    p, s = 10 ** (FIXED - price_precision), 10 ** (FIXED - size_precision)
    return (
        int(bar.ts_event),
        bar.open.raw // p,
        bar.high.raw // p,
        bar.low.raw // p,
        bar.close.raw // p,
        bar.volume.raw // s,
    )


@dataclass(frozen=True)
class Precision:
    price: int
    size: int


def framework_bars(bar_type: str, columns: dict[str, bytes], p: Precision) -> list[Bar]:
    """Bars as ``Series.columns`` gives them, as framework ``Bar`` objects of ``bar_type`` (what
    the store rewrites from)."""
    ts = np.frombuffer(columns["ts_event"], dtype="<u8").tolist()
    o, h, lo, c, v = (
        np.frombuffer(columns[k], dtype="<i8").tolist() for k in ("open", "high", "low", "close", "volume")
    )
    price_scale, size_scale = 10 ** (FIXED - p.price), 10 ** (FIXED - p.size)
    price = lambda m: Price.from_raw(m * price_scale, p.price)  # noqa: E731
    kind = BarType.from_str(bar_type)
    return [
        Bar(
            kind,
            price(o[k]),
            price(h[k]),
            price(lo[k]),
            price(c[k]),
            Quantity.from_raw(v[k] * size_scale, p.size),
            ts[k],
            ts[k],
        )
        for k in range(len(ts))
    ]


class SeriesBook:
    """Every series of the node, created on first use. Each series asks ``reserve`` before it
    numbers above what it granted (see ``spine.node.persist.sequences``) and starts above ``floor``."""

    def __init__(self, capacity: int = 5_000, *, reserve: Callable[[int], int] | None = None) -> None:
        self.capacity = capacity
        self.reserve = reserve
        #: A series created from now on numbers above this (what an earlier run may have served).
        self.floor = 0
        self._precisions: dict[str, Precision] = {}
        self._series: dict[tuple[str, str], Series] = {}

    def register(self, instrument_id: str, price_precision: int, size_precision: int) -> None:
        self._precisions[instrument_id] = Precision(price_precision, size_precision)

    def precision(self, instrument_id: str) -> Precision:
        return self._precisions[instrument_id]

    def __contains__(self, instrument_id: object) -> bool:
        return instrument_id in self._precisions

    def instruments(self) -> list[str]:
        return list(self._precisions)

    def series(self, instrument_id: str, channel: str) -> Series:
        key = (instrument_id, channel)
        found = self._series.get(key)
        if found is None:
            p = self._precisions[instrument_id]
            found = self._series[key] = Series(
                channel=channel,
                price_precision=p.price,
                size_precision=p.size,
                capacity=self.capacity,
                reserve=self.reserve,
            )
            if self.floor:
                found.resequence(np.empty(0, np.uint64), self.floor)
        return found

    def held(self) -> Iterator[tuple[str, str, Series]]:
        for (instrument_id, channel), series in self._series.items():
            yield instrument_id, channel, series

    def push(self, instrument_id: str, channel: str, bar: Any) -> tuple[str, list[tuple[Any, ...]]]:
        """Take one closed framework bar: the series' outcome and the derived buckets it closed."""
        p = self._precisions[instrument_id]
        return self.series(instrument_id, channel).push(*mantissas(bar, p.price, p.size))

    def framework_bars(self, bar_type: str, channel: str) -> list[Bar]:
        """A series' retained bars as framework ``Bar`` objects of ``bar_type`` (what the store
        rewrites from)."""
        instrument_id = instrument_of(bar_type)
        return framework_bars(bar_type, self.series(instrument_id, channel).columns(), self._precisions[instrument_id])
