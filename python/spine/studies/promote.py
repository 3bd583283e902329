"""Promote: a revision's files with its parameters' defaults set to a trial's values.

Only the ``default = ...`` line of each ``[parameters.NAME]`` table of ``strategy.toml``
changes (comments, order and every other byte stay), written as the declaration's type writes
it: an integer bare, a decimal as a quoted string. The result is planned again and must give
exactly those values; a file the rewrite cannot place them in (an inline table, a default
spread over lines) is refused rather than guessed at.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from spine.strategies import document
from spine.strategies.errors import StrategyError

__all__ = ["ENTRY", "PromoteError", "with_defaults"]

ENTRY = "strategy.toml"
_TABLE = re.compile(r"^\s*\[\s*([^\]\s]+)\s*\]\s*(#.*)?$")
_DEFAULT = re.compile(r"^(\s*default\s*=\s*)(\"[^\"]*\"|'[^']*'|[-+0-9][0-9_.]*)(\s*(#.*)?)$")


class PromoteError(ValueError):
    """Values the revision's files cannot take as their defaults: the text says why."""


def with_defaults(files: Mapping[str, str], values: Mapping[str, str]) -> dict[str, str]:
    """``files`` with the defaults of the parameters ``values`` names set to them.

    # Errors
    :class:`PromoteError` (see the module docs)."""
    declared = {p.name: p for p in document.plan(files).parameters}
    lines = files[ENTRY].splitlines(keepends=True)
    placed: set[str] = set()
    table = None
    for i, line in enumerate(lines):
        if header := _TABLE.match(line):
            table = header.group(1)
            continue
        name = table.removeprefix("parameters.") if table and table.startswith("parameters.") else ""
        if name in values and (found := _DEFAULT.match(line.rstrip("\r\n"))):
            literal = values[name] if declared[name].type == "integer" else f'"{values[name]}"'
            ending = line[len(line.rstrip("\r\n")) :]
            lines[i] = found.group(1) + literal + found.group(3) + ending
            placed.add(name)
    missing = sorted(set(values) - placed)
    if missing:
        raise PromoteError(
            f"{ENTRY}: no one-line default of parameter {missing[0]} under [parameters.{missing[0]}] to set"
        )
    out = {**files, ENTRY: "".join(lines)}
    try:
        planned = document.plan(out).values
    except StrategyError as error:
        raise PromoteError(f"{ENTRY} with the new defaults does not plan: {error}") from None
    wrong = sorted(n for n in values if planned.get(n) != values[n])
    if wrong:
        raise PromoteError(f"{ENTRY}: the default of {wrong[0]} reads {planned.get(wrong[0])!r} after the rewrite")
    return out
