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


def node_reads(path: Path) -> set[str]:
    """Every attribute a module reads off ``node`` or ``self.node``."""
    reads = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Attribute):
            owner = node.value
            if (isinstance(owner, ast.Name) and owner.id == "node") or (
                    isinstance(owner, ast.Attribute) and owner.attr == "node"
                    and isinstance(owner.value, ast.Name) and owner.value.id == "self"):
                reads.add(node.attr)
    return reads


def test_the_http_layer_reads_a_node_only_through_its_view() -> None:
    """Handlers reach the node through ``NodeView``'s members and nothing else: the seam the
    gateway implements a second time."""
    from spine.http.view import NodeView

    members = {name for name in vars(NodeView) if not name.startswith("_")} | set(NodeView.__annotations__)
    reads = {str(path.relative_to(PACKAGE)): sorted(node_reads(path) - members)
             for path in sorted((PACKAGE / "http").rglob("*.py"))}
    assert {path: names for path, names in reads.items() if names} == {}
    assert node_reads(PACKAGE / "http" / "market.py")  # the walk sees the handlers' reads


def test_the_venue_view_implements_the_whole_seam() -> None:
    from spine.http.view import NodeView
    from spine.node.view import VenueView

    methods = {name for name, value in vars(NodeView).items() if callable(value) and not name.startswith("_")}
    assert methods <= {name for name, value in vars(VenueView).items() if callable(value)}
