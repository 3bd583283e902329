"""Reference decimals and timestamps (pinned decision 4) on the stdlib ``decimal`` module.

* A decimal string matches ``^-?(0|[1-9][0-9]*)(\\.[0-9]+)?$`` (no exponent, no ``+``, no
  leading zeros) and is not a negative zero (``-0``, ``-0.00``): else ``INVALID_DECIMAL``.
* Parsing at a scale (0..=18, else ``INVALID_SCALE``) is exact: more fractional digits than the
  scale is ``DECIMAL_SCALE_EXCEEDED``; the mantissa ``value * 10**scale`` must fit signed
  128 bit, else ``DECIMAL_OUT_OF_RANGE``.
* Formatting writes exactly ``scale`` fractional digits and never a sign on zero.
* Quantizing rounds half to even (``Decimal.quantize(..., ROUND_HALF_EVEN)``).
* A nanosecond timestamp matches ``^(0|[1-9][0-9]*)$`` and fits unsigned 64 bit.

Checks run in the order scale, syntax, negative zero, digits, range.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_EVEN, Context, Decimal
from typing import NoReturn

__all__ = [
    "MAX_SCALE",
    "I128_MIN",
    "I128_MAX",
    "U64_MAX",
    "DecimalRefusal",
    "TimestampRefusal",
    "format_decimal",
    "parse_decimal",
    "parse_timestamp",
    "quantize_decimal",
]

#: The widest scale a decimal may have (fractional digits).
MAX_SCALE = 18
#: A mantissa's range: the core holds decimals as i128 mantissas.
I128_MIN, I128_MAX = -(2**127), 2**127 - 1
#: The latest nanosecond timestamp (u64).
U64_MAX = 2**64 - 1

_DECIMAL = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?")
_TIMESTAMP = re.compile(r"0|[1-9][0-9]*")
# Wide enough that nothing below ever rounds except where asked to (quantize).
_CONTEXT = Context(prec=400, rounding=ROUND_HALF_EVEN)


class DecimalRefusal(ValueError):
    """A refused decimal or scale; ``symbol`` as on the wire."""

    def __init__(self, symbol: str, detail: str) -> None:
        super().__init__(f"{symbol}: {detail}")
        self.symbol = symbol


class TimestampRefusal(ValueError):
    """A refused nanosecond timestamp string."""

    symbol = "INVALID_TIMESTAMP"


def _refuse(symbol: str, detail: str) -> NoReturn:
    raise DecimalRefusal(symbol, detail)


def _check_scale(scale: int) -> None:
    if isinstance(scale, bool) or not isinstance(scale, int) or not 0 <= scale <= MAX_SCALE:
        _refuse("INVALID_SCALE", f"scale {scale!r} is outside 0..={MAX_SCALE}")


def _checked(text: str) -> Decimal:
    if not isinstance(text, str) or _DECIMAL.fullmatch(text) is None:
        _refuse("INVALID_DECIMAL", f"{text!r} is not a decimal string")
    value = Decimal(text)
    if text.startswith("-") and value.is_zero():
        _refuse("INVALID_DECIMAL", f"{text!r} is a negative zero")
    return value


def _fraction_digits(text: str) -> int:
    return len(text.partition(".")[2])


def _mantissa(value: Decimal, scale: int) -> int | None:
    """``value * 10**scale`` exactly, or None when it cannot fit signed 128 bit."""
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int) and exponent + scale >= 0
    if len(digits) > 40:  # at least 10**39 > I128_MAX once scaled; int() never sees it
        return None
    raw = int("".join(map(str, digits))) * 10 ** (exponent + scale)
    raw = -raw if sign else raw
    return raw if I128_MIN <= raw <= I128_MAX else None


def parse_decimal(text: str, scale: int) -> int:
    """The exact mantissa of ``text`` at ``scale``."""
    _check_scale(scale)
    value = _checked(text)
    if _fraction_digits(text) > scale:
        _refuse("DECIMAL_SCALE_EXCEEDED", f"{text!r} has more than {scale} fractional digits")
    raw = _mantissa(value, scale)
    if raw is None:
        _refuse("DECIMAL_OUT_OF_RANGE", f"{text!r} does not fit at scale {scale}")
    return raw


def format_decimal(raw: int, scale: int) -> str:
    """The canonical string of mantissa ``raw`` at ``scale``."""
    _check_scale(scale)
    if not I128_MIN <= raw <= I128_MAX:
        _refuse("DECIMAL_OUT_OF_RANGE", f"mantissa {raw} is outside signed 128 bit")
    return format(Decimal(raw).scaleb(-scale, _CONTEXT), "f")


def quantize_decimal(text: str, scale: int) -> str:
    """``text`` rounded half to even to ``scale`` fractional digits, formatted canonically.

    Defined here for every decimal string; the result must fit the fixed-point range.
    """
    _check_scale(scale)
    value = _checked(text)
    if value.adjusted() >= 40:  # at least 10**40: out of range at any scale
        _refuse("DECIMAL_OUT_OF_RANGE", f"{text!r} does not fit at scale {scale}")
    rounded = value.quantize(Decimal(1).scaleb(-scale), ROUND_HALF_EVEN, _CONTEXT)
    if _mantissa(rounded, scale) is None:
        _refuse("DECIMAL_OUT_OF_RANGE", f"{text!r} does not fit at scale {scale}")
    if rounded.is_zero():
        rounded = abs(rounded)  # no sign on zero
    return format(rounded, "f")


def parse_timestamp(text: str) -> int:
    """The value of a nanosecond-epoch string."""
    if not isinstance(text, str) or _TIMESTAMP.fullmatch(text) is None:
        raise TimestampRefusal(f"INVALID_TIMESTAMP: {text!r} is not canonical digits")
    if len(text) > 20 or int(text) > U64_MAX:
        raise TimestampRefusal(f"INVALID_TIMESTAMP: {text!r} exceeds unsigned 64 bit")
    return int(text)
