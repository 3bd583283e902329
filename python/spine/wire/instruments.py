"""Instrument ids: the canonical ``SYMBOL.VENUE`` grammar, and the stricter rule for an id a
backtest reads from a catalog, where the id becomes a directory name.

The grammar (``^[!-~]+\\.[A-Z][A-Z0-9_]*$``, at most 128 characters) takes any printable ASCII
symbol, so ``../../x.SIM`` is grammatical; a run builds ``<catalog>/data/bar/<id>-...`` from it,
so a catalog id holds no ``/``, ``\\`` or ``..`` (the framework's catalog never writes such a
directory: it strips ``/`` from ids) and is checked before any path is built."""

from __future__ import annotations

import re

__all__ = ["INSTRUMENT_ID", "MAX_LENGTH", "catalog_id_problem", "grammar_problem"]

INSTRUMENT_ID = re.compile(r"^[!-~]+\.[A-Z][A-Z0-9_]*\Z")
MAX_LENGTH = 128


def grammar_problem(text: str) -> str | None:
    """Why ``text`` is not a canonical id, in words; None when it is one."""
    if len(text) > MAX_LENGTH or not INSTRUMENT_ID.match(text):
        return (
            f"{text!r} is not a canonical SYMBOL.VENUE id (printable ASCII, a dot, then the venue in capitals, "
            f"digits and _; at most {MAX_LENGTH} characters; e.g. BTCUSDT.SIM)"
        )
    return None


def catalog_id_problem(text: str) -> str | None:
    """Why ``text`` cannot name an instrument in a catalog (see the module docs); None when it can."""
    found = grammar_problem(text)
    if found is not None:
        return found
    for part in ("/", "\\", ".."):
        if part in text:
            return f"{text!r} names no catalog path: an instrument id a backtest reads holds no {part!r}"
    return None
