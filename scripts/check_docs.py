"""Checks that the docs still describe the tree: docs/contract.md holds short bullets, docs/performance.md
stays under its line budget, README.md's layout names every package under python/spine/ and
tests/README.md names every folder under tests/.

`python scripts/check_docs.py` prints each failure and exits 1 if there is one; tests/unit/test_docs.py
runs the same checks, so they hold in CI. Standard library only: it runs before anything is installed.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BULLET_MAX_CHARS = 300
PERFORMANCE_MAX_LINES = 399
LAYOUT_MAX_LINES = 40
LAYOUT_HEADING = "## Layout"
PACKAGE_LINE = "python/spine/"

BULLET = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+")
HEADING = re.compile(r"^#{1,6}\s")


def bullets(text: str) -> Iterator[tuple[int, str]]:
    """Each bullet with its first line number, wrapped lines joined by one space."""
    start, parts = 0, list[str]()
    for number, line in enumerate(text.splitlines(), 1):
        # A wrapped bullet goes on in indented lines, so its length is that of all of them.
        if parts and line.startswith((" ", "\t")) and line.strip() and not BULLET.match(line):
            parts.append(line.strip())
            continue
        if parts:
            yield start, " ".join(parts)
        start, parts = number, [line.strip()] if BULLET.match(line) else []
    if parts:
        yield start, " ".join(parts)


def check_contract(root: Path) -> list[str]:
    """No bullet of docs/contract.md is longer than BULLET_MAX_CHARS characters."""
    text = (root / "docs" / "contract.md").read_text(encoding="utf-8")
    return [
        f"docs/contract.md:{number}: bullet of {len(bullet)} characters (at most {BULLET_MAX_CHARS})"
        for number, bullet in bullets(text)
        if len(bullet) > BULLET_MAX_CHARS
    ]


def check_performance(root: Path) -> list[str]:
    """docs/performance.md stays under 400 lines."""
    count = len((root / "docs" / "performance.md").read_text(encoding="utf-8").splitlines())
    if count > PERFORMANCE_MAX_LINES:
        return [f"docs/performance.md: {count} lines (at most {PERFORMANCE_MAX_LINES})"]
    return []


def section(text: str, heading: str) -> list[str]:
    """The lines of the section under ``heading``, up to the next heading of any level."""
    lines = text.splitlines()
    if heading not in lines:
        return []
    body = lines[lines.index(heading) + 1 :]
    ends = [index for index, line in enumerate(body) if HEADING.match(line)]
    return body[: ends[0]] if ends else body


def packages(root: Path) -> list[str]:
    """The package directories directly under python/spine/ (each holds an __init__.py)."""
    return sorted(path.parent.name for path in (root / "python" / "spine").glob("*/__init__.py"))


def python_entries(layout: list[str]) -> str:
    """The layout's python/spine/ entry with the indented lines below it (its packages)."""
    for index, line in enumerate(layout):
        if line.startswith(PACKAGE_LINE):
            rest = layout[index + 1 :]
            ends = [at for at, entry in enumerate(rest) if entry.strip() and not entry.startswith(" ")]
            return "\n".join([line, *rest[: ends[0] if ends else len(rest)]])
    return ""


def check_readme(root: Path) -> list[str]:
    """README.md's layout section fits on one screen and names every package under python/spine/."""
    layout = section((root / "README.md").read_text(encoding="utf-8"), LAYOUT_HEADING)
    if not layout:
        return [f"README.md: no '{LAYOUT_HEADING}' section"]
    failures: list[str] = []
    if len(layout) > LAYOUT_MAX_LINES:
        failures.append(f"README.md: the layout section has {len(layout)} lines (at most {LAYOUT_MAX_LINES})")
    entries = python_entries(layout)
    failures += [
        f"README.md: the layout names no package {name}/ under {PACKAGE_LINE}"
        for name in packages(root)
        if not re.search(rf"(?<![\w/.]){re.escape(name)}/", entries)
    ]
    return failures


def ignored(name: str) -> bool:
    """Caches and hidden directories a test run leaves behind are no folders of the suite."""
    return name.startswith(".") or name == "__pycache__" or name.endswith(".egg-info")


def suite_folders(root: Path) -> list[str]:
    """Every folder under tests/ that holds a file, as a path relative to tests/ (`unit/jobs`)."""
    tests, folders = root / "tests", list[str]()
    for directory, subdirectories, files in os.walk(tests):
        subdirectories[:] = sorted(name for name in subdirectories if not ignored(name))
        if Path(directory) != tests and any(not ignored(name) for name in files):
            folders.append(Path(directory).relative_to(tests).as_posix())
    return sorted(folders)


def check_tests_readme(root: Path) -> list[str]:
    """tests/README.md names every folder under tests/ as `path/`, the path relative to tests/."""
    text = (root / "tests" / "README.md").read_text(encoding="utf-8")
    return [
        f"tests/README.md: names no folder `{folder}/`" for folder in suite_folders(root) if f"`{folder}/`" not in text
    ]


CHECKS = (check_contract, check_performance, check_readme, check_tests_readme)


def failures(root: Path = ROOT) -> list[str]:
    """Every failure of every check, in check order."""
    return [failure for check in CHECKS for failure in check(root)]


def main() -> int:
    found = failures()
    for failure in found:
        print(failure, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
