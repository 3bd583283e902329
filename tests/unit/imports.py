"""What the import-shape tests read off the package's source: the modules a file imports and
the files of a package that import from a set of packages."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "spine"


def imported(path: Path) -> set[str]:
    """Every module ``path`` imports, at any depth of its code."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def within(name: str, packages: tuple[str, ...]) -> bool:
    return any(name == package or name.startswith(package + ".") for package in packages)


def offenders(folder: str, packages: tuple[str, ...]) -> dict[str, list[str]]:
    """Each file below ``PACKAGE / folder`` that imports from ``packages``, with what it imports."""
    found = {
        str(path.relative_to(PACKAGE)): sorted(name for name in imported(path) if within(name, packages))
        for path in sorted((PACKAGE / folder).rglob("*.py"))
    }
    return {path: names for path, names in found.items() if names}
