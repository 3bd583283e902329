"""Lines for diagnostics: where in a TOML text a table or key is written.

tomllib gives no positions for values, so a semantic problem is pointed at by scanning the
text: the ``key =`` line inside its table (``[table]`` header, or a dotted/inline parent),
else the nearest enclosing table's header or key line, else None. Good enough for a person
reading a receipt; it never claims a line it did not find.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["locate", "syntax_line", "dotted"]

_HEADER = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(#.*)?$")
_SYNTAX = re.compile(r"\(at line (\d+), column \d+\)")


def _normal(name: str) -> str:
    """A header's dotted name without quotes or spaces around the dots."""
    return ".".join(part.strip().strip("\"'") for part in name.split("."))


def _sections(lines: list[str]) -> dict[str, tuple[int, int]]:
    """Table name -> (header index, end index exclusive); the root table is ''."""
    starts: list[tuple[str, int]] = [("", -1)]
    for index, line in enumerate(lines):
        match = _HEADER.match(line)
        if match and not line.lstrip().startswith("[["):
            starts.append((_normal(match.group(1)), index))
    sections: dict[str, tuple[int, int]] = {}
    for position, (name, start) in enumerate(starts):
        end = starts[position + 1][1] if position + 1 < len(starts) else len(lines)
        sections.setdefault(name, (start, end))
    return sections


def _key_line(lines: list[str], start: int, end: int, key: str) -> int | None:
    pattern = re.compile(r"^\s*(" + re.escape(key) + r"|\"" + re.escape(key) + r"\"|'" + re.escape(key) + r"')\s*[=.]")
    for index in range(start + 1, end):
        if pattern.match(lines[index]):
            return index
    return None


def locate(text: str, path: Sequence[str | int]) -> int | None:
    """The 1-based line where ``path`` (table and key names, list indexes) is written, or the
    line of its nearest enclosing table or key that is; None when none is found."""
    lines = text.splitlines()
    sections = _sections(lines)
    names = [str(p) for p in path]
    for depth in range(len(names), 0, -1):
        header = ".".join(names[:depth])
        if header in sections and sections[header][0] >= 0:
            start, end = sections[header]
            if depth < len(names):
                found = _key_line(lines, start, end, names[depth])
                if found is not None:
                    return found + 1
            return start + 1
        nested = [start for name, (start, _) in sections.items() if name.startswith(header + ".")]
        if nested and depth == len(names):  # no [a] header, but an [a.b] one: point at the first
            return min(nested) + 1
        table = ".".join(names[: depth - 1])
        if table in sections:
            start, end = sections[table]
            found = _key_line(lines, start, end, names[depth - 1])
            if found is not None:
                return found + 1
    return None


def syntax_line(message: str) -> int | None:
    """The line of a ``tomllib.TOMLDecodeError`` message (``... (at line N, column M)``)."""
    match = _SYNTAX.search(message)
    return int(match.group(1)) if match else None


def dotted(path: Sequence[str | int]) -> str:
    """A path as diagnostics name it: ``rules.entry_long.all[0].key``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out
