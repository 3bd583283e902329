"""A bound on how deep a project's TOML and JSON files nest, checked before they are parsed.

Python's TOML parser (and the checks that walk what it read) recurse once or more per level:
a file of a few hundred nested arrays ends in RecursionError. Every user file is measured
first by one linear pass over its brackets (strings and comments skipped), and what a TOML
file builds through dotted keys and table headers is measured again once parsed.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["MAX_NESTING", "data_problem", "nesting_problem", "scanned"]

#: Arrays and tables one inside another, at most (a strategy's deepest rule needs about 12).
MAX_NESTING = 64

#: The next character a scan acts on: a bracket, a line end, a comment or a string's quote.
_NEXT = {"toml": re.compile(r"[\[\]{}#\"']"), "json": re.compile(r"[\[\]{}\"]")}
_Q3, _A3 = '"' * 3, "'" * 3
#: A string's rest after its opening quote(s), to its closing one or, unterminated, as far as
#: it reaches. Possessive (``*+``): a match never backtracks, and the scan never starts one
#: again inside a string, so a file of unterminated escapes is still read in one pass.
_REST = {
    '"': re.compile(r'(?:[^"\\\n]|\\.)*+"?'),
    "'": re.compile(r"[^'\n]*+'?"),
    _Q3: re.compile(r'(?:[^"\\]|\\.|"(?!""))*+(?:"""|\Z)', re.DOTALL),
    _A3: re.compile(r"(?:[^']|'(?!''))*+(?:" + _A3 + r"|\Z)", re.DOTALL),
    "json": re.compile(r'(?:[^"\\]|\\.)*+"?', re.DOTALL),
}


def _string_end(text: str, kind: str, quote: str, at: int) -> int:
    """Where the string opened by ``quote`` at ``at`` ends (its closing quote included)."""
    if kind == "json":
        opener = "json"
    else:
        opener = quote * 3 if text.startswith(quote * 3, at) else quote
    found = _REST[opener].match(text, at + (1 if len(opener) != 3 else 3))
    assert found is not None  # every pattern matches the empty string
    return found.end()


def _scan(text: str, kind: str) -> tuple[int | None, int]:
    """``(the line where brackets first nest past MAX_NESTING or None, characters passed)``:
    each step starts where the last ended, so the second is at most the text's length."""
    pattern = _NEXT[kind]
    depth, at, passed = 0, 0, 0
    while (found := pattern.search(text, at)) is not None:
        char, end = found.group(), found.end()
        if char in "[{":
            depth += 1
            if depth > MAX_NESTING:
                return text.count("\n", 0, end) + 1, passed + end - at
        elif char in "]}":
            depth = max(0, depth - 1)
        elif char == "#":
            stop = text.find("\n", end)
            end = len(text) if stop < 0 else stop
        else:
            end = _string_end(text, kind, char, found.start())
        passed += end - at
        at = end
    return None, passed + len(text) - at


def scanned(path: str, text: str) -> int:
    """How many characters the scan of a TOML (or, by its name, JSON) file passed."""
    return _scan(text, "json" if path.endswith(".json") else "toml")[1]


def nesting_problem(path: str, text: str) -> tuple[int, str] | None:
    """``(line, reason)`` when a ``.toml`` or ``.json`` file's brackets nest past the bound;
    None for a file within it and for every other kind of file."""
    if not path.endswith((".toml", ".json")):
        return None
    line = _scan(text, "json" if path.endswith(".json") else "toml")[0]
    if line is None:
        return None
    return line, _reason()


def data_problem(data: Any) -> str | None:
    """The reason when parsed data (a TOML file's tables through dotted keys and headers)
    nests past the bound, else None; measured without recursion."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        for child in children:
            if isinstance(child, (dict, list)):
                if depth + 1 > MAX_NESTING:
                    return _reason()
                stack.append((child, depth + 1))
    return None


def _reason() -> str:
    return f"arrays and tables nest too deep; allowed: at most {MAX_NESTING} levels"
