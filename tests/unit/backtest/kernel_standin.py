"""A plain-Python stand-in for ``spine._core.StrategyKernel`` (its documented API), used by
the backtest tests only while the extension lacks the real one: EMA features (the reference
mirror of Spine's kernel) and the condition grammar's comparisons, groups and crosses.
``install()`` puts it on ``spine._core`` when the real kernel is absent."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import spine._core as core
from reference.ema_cross_nautilus import EmaMirror

OPS = {"LT": lambda a, b: a < b, "LE": lambda a, b: a <= b, "GT": lambda a, b: a > b, "GE": lambda a, b: a >= b,
       "EQ": lambda a, b: a == b, "NE": lambda a, b: a != b}


class StandInKernel:
    def __init__(self, *, features: list[tuple[str, str, dict[str, str]]], rules: list[tuple[str, str]],
                 price_scale: int, size_scale: int) -> None:
        self.price_scale, self.size_scale = price_scale, size_scale
        self.emas: dict[str, EmaMirror] = {}
        for feature_id, implementation, parameters in features:
            if implementation != "spine_core.features.ema":
                raise ValueError(f"stand-in kernel: {implementation} not supported")
            self.emas[feature_id] = EmaMirror(int(parameters["period"]), price_scale)
        self.rules = [json.loads(text) for _, text in rules]
        self.keys = ["bar.open", "bar.high", "bar.low", "bar.close", "bar.volume",
                     *(f"{f}.value" for f in self.emas)]
        self.row: dict[str, Decimal | None] = {}
        self.prev: dict[str, Decimal | None] | None = None

    def update(self, ts_event: int, open: int, high: int, low: int, close: int, volume: int) -> int:
        p, s = self.price_scale, self.size_scale
        x = close / float(10**p)
        for ema in self.emas.values():
            ema.update(x)
        self.prev, self.row = self.row or None, {
            "bar.open": Decimal(open).scaleb(-p), "bar.high": Decimal(high).scaleb(-p),
            "bar.low": Decimal(low).scaleb(-p), "bar.close": Decimal(close).scaleb(-p),
            "bar.volume": Decimal(volume).scaleb(-s),
            **{f"{f}.value": ema.decimal() for f, ema in self.emas.items()},
        }
        return sum(1 << i for i, rule in enumerate(self.rules) if self._holds(rule))

    def _other(self, cond: dict[str, Any], row: dict[str, Decimal | None]) -> Decimal | None:
        return row.get(cond["ref"]) if "ref" in cond else Decimal(cond["value"])

    def _holds(self, cond: dict[str, Any]) -> bool:
        if "all" in cond:
            return all(self._holds(c) for c in cond["all"])
        if "any" in cond:
            return any(self._holds(c) for c in cond["any"])
        op, a = cond["op"], self.row.get(cond["key"])
        if op in ("CROSSES_ABOVE", "CROSSES_BELOW"):
            if self.prev is None:
                return False
            pa, pb, b = self.prev.get(cond["key"]), self._other(cond, self.prev), self._other(cond, self.row)
            if None in (a, b, pa, pb):
                return False
            return (pa <= pb and a > b) if op == "CROSSES_ABOVE" else (pa >= pb and a < b)  # type: ignore[operator]
        b = self._other(cond, self.row)
        return a is not None and b is not None and OPS[op](a, b)

    def value(self, key: str) -> str | None:
        v = self.row.get(key)
        return None if v is None else str(v)

    def mark_gap(self) -> None:
        for ema in self.emas.values():
            ema.reset()
        self.prev, self.row = None, {}


def install() -> bool:
    """Put the stand-in on ``spine._core`` unless the real kernel is there; whether it did."""
    if hasattr(core, "StrategyKernel"):
        return False
    core.StrategyKernel = StandInKernel  # type: ignore[attr-defined]
    return True
