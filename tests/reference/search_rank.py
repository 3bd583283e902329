"""Reference instrument search, from the rule in docs/contract.md alone (never imports spine).

An instrument matches when the text, case-folded, is found in its symbol or in its base, quote
or settlement currency or underlying (those present). The matches come in three groups, each
sorted by instrument id: the symbol is the text; some field begins with the text; some field
holds it anywhere.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

OTHER_FIELDS = ("base_currency", "quote_currency", "settlement_currency", "underlying")


def _group(instrument: dict[str, Any], text: str) -> int | None:
    symbol = instrument["symbol"].casefold()
    others = [instrument[name].casefold() for name in OTHER_FIELDS if instrument[name] is not None]
    if symbol == text:
        return 0
    if any(value[: len(text)] == text for value in [symbol, *others]):
        return 1
    if any(value.find(text) >= 0 for value in [symbol, *others]):
        return 2
    return None


def search(
    instruments: Sequence[dict[str, Any]], text: str, classes: Collection[str] | None = None
) -> list[dict[str, Any]]:
    groups: list[list[dict[str, Any]]] = [[], [], []]
    for instrument in instruments:
        if classes is not None and instrument["instrument_class"] not in classes:
            continue
        group = _group(instrument, text.casefold())
        if group is not None:
            groups[group].append(instrument)
    return [i for group in groups for i in sorted(group, key=lambda i: i["instrument_id"])]
