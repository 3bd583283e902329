"""The lexical rules of strategy values: exact decimal and integer text, names, parameter
references (``"{name}"``) and instrument ids, as the schemas and pinned decision 4 spell them.
Comparisons go through :class:`decimal.Decimal`, which is exact for these strings."""

from __future__ import annotations

import re
from decimal import Decimal

from spine.bars import RESOLUTIONS  # a strategy runs at the screener's seven

__all__ = [
    "INT64_MIN",
    "INT64_MAX",
    "RESOLUTIONS",
    "CHANNELS",
    "DIRECTIONS",
    "is_decimal",
    "is_integer",
    "is_name",
    "is_instrument_id",
    "reference",
    "exact",
    "TomlFloat",
    "QUANTITY_MAX",
    "quantity_problem",
    "sizing_problem",
    "size_step_problem",
]

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
CHANNELS = ("EXTERNAL", "INTERNAL")
DIRECTIONS = ("LONG_ONLY", "SHORT_ONLY", "LONG_SHORT")

#: The framework's largest order quantity (``nautilus_trader.model.objects.QUANTITY_MAX``) and
#: its finest scale (``FIXED_PRECISION``): past either an order cannot be built.
QUANTITY_MAX = Decimal("34028236692093")
QUANTITY_SCALE = 16
_DECIMAL = re.compile(r"^-?(0|[1-9][0-9]*)(\.[0-9]+)?$")
_NEGATIVE_ZERO = re.compile(r"^-0(\.0+)?$")
_INTEGER = re.compile(r"^-?(0|[1-9][0-9]*)$")
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
_REFERENCE = re.compile(r"^\{([a-z][a-z0-9_]{0,63})\}$")
_INSTRUMENT = re.compile(r"^[!-~]+\.[A-Z][A-Z0-9_]*$")


class TomlFloat(str):
    """A TOML float as read (``parse_float``), kept as its text so it is reported once and
    never used: decimals are strings."""


def is_decimal(text: str) -> bool:
    """Exact decimal text: ``^-?(0|[1-9][0-9]*)(\\.[0-9]+)?$``, no negative zero."""
    return bool(_DECIMAL.match(text)) and not _NEGATIVE_ZERO.match(text)


def is_integer(text: str) -> bool:
    """Integer text within signed 64 bit, no leading zeros, no negative zero."""
    return bool(_INTEGER.match(text)) and text != "-0" and INT64_MIN <= int(text) <= INT64_MAX


def is_name(text: str) -> bool:
    """A lowercase snake-case name ``^[a-z][a-z0-9_]{0,63}$``."""
    return bool(_NAME.match(text))


def is_instrument_id(text: str) -> bool:
    """A canonical ``SYMBOL.VENUE`` id of at most 128 characters."""
    return len(text) <= 128 and bool(_INSTRUMENT.match(text))


def reference(text: str) -> str | None:
    """The parameter a whole-value reference ``"{name}"`` names, else None."""
    match = _REFERENCE.match(text)
    return match.group(1) if match else None


def exact(text: str) -> Decimal:
    """The exact value of decimal or integer text (checked by the caller)."""
    return Decimal(text)


def quantity_problem(text: str) -> str | None:
    """Why exact decimal ``text`` cannot be an order quantity, in words; None when it can be
    (its multiple of an instrument's size step is checked where the instrument is known)."""
    value = Decimal(text)
    if value <= 0:
        return "must be > 0"
    if value > QUANTITY_MAX:
        return f"is too large: a quantity is at most {QUANTITY_MAX}"
    if -int(value.as_tuple().exponent) > QUANTITY_SCALE:
        return f"is too fine: a quantity has at most {QUANTITY_SCALE} decimal places"
    return None


def sizing_problem(key: str, text: str) -> str | None:
    """Why exact decimal ``text`` cannot be ``[sizing] key`` (quantity, fraction or notional),
    in words; None when it can be."""
    if key == "quantity":
        return quantity_problem(text)
    value = Decimal(text)
    if -int(value.as_tuple().exponent) > QUANTITY_SCALE:
        return f"is too fine: at most {QUANTITY_SCALE} decimal places"
    if key == "fraction" and not 0 < value <= 1:
        return "must be a fraction of the equity in (0, 1]"
    if key == "notional" and value <= 0:
        return "must be > 0 (an amount of the quote currency)"
    return None


def size_step_problem(quantity: str, instrument_id: str, size_precision: int) -> str | None:
    """Why exact decimal ``quantity`` cannot be ordered on ``instrument_id`` whose size step is
    ``10^-size_precision``, in words; None when it can. The one rule of the run and the
    submit: a quantity is never rounded to the step."""
    places = len(quantity.partition(".")[2].rstrip("0"))  # from the text: no context rounding
    if quantity_problem(quantity) is None and places <= size_precision:
        return None
    step = format(Decimal(1).scaleb(-size_precision), "f")
    return (
        f"quantity {quantity} must be a positive multiple of {instrument_id}'s size step {step} (size "
        f"precision {size_precision}), at most {QUANTITY_MAX}; it is never rounded"
    )
