"""Imports point one way: the HTTP layer knows the wire layer and the core, never a process
package (node/ today; the gateway serves the same app over upstreams), and importing it pulls
in no trading framework."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "spine"
PROCESSES = ("spine.node",)


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


@pytest.mark.parametrize("layer", ["http", "wire"])
def test_a_layer_imports_no_process_package(layer: str) -> None:
    offenders = {str(path.relative_to(PACKAGE)): sorted(name for name in imported(path)
                                                          if name.startswith(PROCESSES))
                 for path in sorted((PACKAGE / layer).rglob("*.py"))}
    assert {path: names for path, names in offenders.items() if names} == {}


def test_importing_the_http_app_loads_no_trading_framework() -> None:
    probe = "import sys, spine.http.app; print(sorted(m for m in sys.modules if m.startswith(('nautilus_trader', 'spine.node'))))"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert loaded.stdout.strip() == "[]"
