"""Wire primitives for the msgspec document Structs (pinned decision 4).

Decimals and timestamps are ``str`` on the wire and here: a Struct never turns them into
numbers, so a value crosses the process exactly as produced. The constraints mirror the
``$defs`` of the JSON schemas; the patterns end in ``\\Z`` because Python's ``$`` would also
accept a trailing newline.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

__all__ = [
    "Channel",
    "Count",
    "Cursor",
    "Decimal",
    "Document",
    "InstrumentClass",
    "InstrumentId",
    "Nanos",
    "Resolution",
    "Symbol",
    "WireObject",
]

Decimal = Annotated[
    str, msgspec.Meta(pattern=r"^(?!-0(\.0+)?\Z)-?(0|[1-9][0-9]*)(\.[0-9]+)?\Z")
]
"""An exact decimal string: no exponent, no leading zeros, no negative zero."""

Nanos = Annotated[str, msgspec.Meta(pattern=r"^(0|[1-9][0-9]*)\Z", max_length=20)]
"""Nanoseconds since the UNIX epoch as a digit string."""

InstrumentId = Annotated[str, msgspec.Meta(pattern=r"^[!-~]+\.[A-Z][A-Z0-9_]*\Z", max_length=128)]
"""Canonical ``SYMBOL.VENUE``; the venue follows the last dot."""

Symbol = Annotated[str, msgspec.Meta(pattern=r"^[A-Z][A-Z0-9_]*\Z")]
"""An upper-case symbolic name (venue, degradation reason)."""

Count = Annotated[int, msgspec.Meta(ge=0, le=2**63 - 1)]
"""A counter: the only integers on the wire besides sequences, codes and schema_version."""

Cursor = Annotated[str, msgspec.Meta(min_length=1)] | None
"""Opaque next-page cursor; null when the list is exhausted."""

Channel = Literal["EXTERNAL", "INTERNAL"]
"""Bar close source; the two catalog roots are never relabelled or cross-filled."""

Resolution = Annotated[str, msgspec.Meta(pattern=r"^[1-9][0-9]*(s|m|h|d)\Z")]
"""A resolution name: count and unit, e.g. ``1m``, ``5m``, ``4h``, ``1d``."""

InstrumentClass = Literal[
    "SPOT", "SWAP", "FUTURE", "FUTURES_SPREAD", "FORWARD", "CFD", "BOND",
    "OPTION", "OPTION_SPREAD", "WARRANT", "SPORTS_BETTING", "BINARY_OPTION",
]
"""The trading framework's instrument classes."""


class WireObject(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Base of every wire Struct: closed (unknown fields are refused), keyword-only."""


class Document(WireObject, kw_only=True):
    """Base of every tagged document. Subclasses add ``schema_id: Literal[<id>] = <id>``."""

    version: Literal["spine.v2"] = "spine.v2"
    schema_version: Literal[1] = 1
