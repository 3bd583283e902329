"""A bound on how deep a project's TOML and JSON files nest, checked before they are parsed.

Python's TOML parser (and the checks that walk what it read) recurse once or more per level:
a file of a few hundred nested arrays ends in RecursionError. Every user file is measured
first by a linear scan of its brackets (strings and comments skipped), and what a TOML file
builds through dotted keys and table headers is measured again once parsed.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["MAX_NESTING", "data_problem", "nesting_problem"]

#: Arrays and tables one inside another, at most (a strategy's deepest rule needs about 12).
MAX_NESTING = 64

_TOML = re.compile(r'''
    \#[^\n]*                                  # a comment
  | """(?:[^"\\]|\\.|"(?!""))*"""             # a multi-line basic string
  | '\'\'(?:[^']|'(?!''))*'\'\'               # a multi-line literal string
  | "(?:[^"\\\n]|\\.)*"                       # a basic string
  | '[^'\n]*'                                 # a literal string
  | [\[\]{}\n]
''', re.VERBOSE | re.DOTALL)
_JSON = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}\n]', re.DOTALL)


def _deep_line(text: str, tokens: re.Pattern[str]) -> int | None:
    """The line where brackets first nest past :data:`MAX_NESTING`, or None."""
    depth, line = 0, 1
    for match in tokens.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > MAX_NESTING:
                return line
        elif token in "]}":
            depth = max(0, depth - 1)
        else:
            line += token.count("\n")
    return None


def nesting_problem(path: str, text: str) -> tuple[int, str] | None:
    """``(line, reason)`` when a ``.toml`` or ``.json`` file's brackets nest past the bound;
    None for a file within it and for every other kind of file."""
    if path.endswith(".toml"):
        line = _deep_line(text, _TOML)
    elif path.endswith(".json"):
        line = _deep_line(text, _JSON)
    else:
        return None
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
