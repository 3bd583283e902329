"""Imports point one way: the HTTP kit knows the wire layer and the core, never a process
package, and importing it pulls in no trading framework and no process's code; the process
packages stand side by side, none importing another, over shared packages that import none of
them; the node's handlers read the node only through its view."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from imports import PACKAGE, imported, offenders, within

#: The packages of a process each (its command, service and app).
PROCESS_PACKAGES = ("node", "gateway", "screener", "worker", "importer", "web", "tools")
#: The packages processes share beyond the kit: the job queue, the strategy projects, the backtest
#: runner, the parameter studies, the client (the tool table and its calls).
SHARED_PACKAGES = ("jobs", "strategies", "backtest", "studies", "client")
PROCESSES = tuple(f"spine.{name}" for name in (*PROCESS_PACKAGES, *SHARED_PACKAGES))
#: The node's API: its app and handlers (they read the node through ``NodeView``).
NODE_API = ("api", "reads", "bar_pages", "search", "selection", "v1_reads", "v1_stream", "execution_reads")


@pytest.mark.parametrize("layer", ["http", "wire"])
def test_a_layer_imports_no_process_package(layer: str) -> None:
    assert offenders(layer, PROCESSES) == {}


@pytest.mark.parametrize("package", PROCESS_PACKAGES)
def test_a_process_package_imports_no_other_process_package(package: str) -> None:
    others = tuple(f"spine.{name}" for name in PROCESS_PACKAGES if name != package)
    assert offenders(package, others) == {}


@pytest.mark.parametrize("package", SHARED_PACKAGES)
def test_a_shared_package_imports_no_process_package(package: str) -> None:
    processes = tuple(f"spine.{name}" for name in PROCESS_PACKAGES)
    assert offenders(package, processes) == {}


@pytest.mark.parametrize("module", ["spine.http.app", "spine.http.streams", "spine.http.openapi"])
def test_importing_the_http_kit_loads_no_trading_framework_and_no_process(module: str) -> None:
    prefixes = ("nautilus_trader", *PROCESSES)
    probe = f"import sys, {module}; print(sorted(m for m in sys.modules if m.startswith({prefixes!r})))"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert loaded.stdout.strip() == "[]"


@pytest.mark.parametrize("module", ["spine.client", "spine.tools.api", "spine.tools.main", "spine.cli"])
def test_the_client_and_the_tool_server_load_no_server_side_package(module: str) -> None:
    """A notebook's client and an agent's tool server need neither the trading framework nor
    Granian, nor any process's or shared package's code but the client's."""
    servers = tuple(
        f"spine.{name}" for name in (*PROCESS_PACKAGES, *SHARED_PACKAGES) if name not in ("client", "tools")
    )
    prefixes = ("nautilus_trader", "granian", "optuna", "sqlalchemy", *servers)
    probe = f"import sys, {module}; print(sorted(m for m in sys.modules if m.startswith({prefixes!r})))"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert loaded.stdout.strip() == "[]"


def node_reads(path: Path) -> set[str]:
    """Every attribute a module reads off ``node`` or ``self.node``."""
    reads = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Attribute):
            owner = node.value
            if (isinstance(owner, ast.Name) and owner.id == "node") or (
                isinstance(owner, ast.Attribute)
                and owner.attr == "node"
                and isinstance(owner.value, ast.Name)
                and owner.value.id == "self"
            ):
                reads.add(node.attr)
    return reads


def test_the_node_api_reads_a_node_only_through_its_view() -> None:
    """Handlers reach the node through ``NodeView``'s members and nothing else: the seam the
    gateway implements a second time."""
    from spine.node.view import NodeView

    members = {name for name in vars(NodeView) if not name.startswith("_")} | set(NodeView.__annotations__)
    paths = [PACKAGE / "node" / f"{name}.py" for name in NODE_API]
    reads = {str(path.relative_to(PACKAGE)): sorted(node_reads(path) - members) for path in paths}
    assert {path: names for path, names in reads.items() if names} == {}
    assert node_reads(PACKAGE / "node" / "reads.py")  # the walk sees the handlers' reads


def test_the_venue_view_implements_the_whole_seam() -> None:
    from spine.node.venue_view import VenueView
    from spine.node.view import NodeView

    methods = {name for name, value in vars(NodeView).items() if callable(value) and not name.startswith("_")}
    assert methods <= {name for name, value in vars(VenueView).items() if callable(value)}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_loops(package: str) -> list[list[str]]:
    """The import loops among the modules of ``package``, typing imports included (a loop a
    reader follows is a loop whether or not it runs)."""
    modules = {module_name(path): path for path in (PACKAGE / package).rglob("*.py")}
    graph = {name: sorted(m for m in imported(path) if m in modules and m != name) for name, path in modules.items()}
    loops, done = [], set()

    def visit(name: str, trail: list[str]) -> None:
        if name in trail:
            loops.append(trail[trail.index(name) :] + [name])
            return
        if name in done:
            return
        for target in graph[name]:
            visit(target, [*trail, name])
        done.add(name)

    for name in sorted(graph):
        visit(name, [])
    return loops


@pytest.mark.parametrize("package", ["http", "node"])
def test_a_package_has_no_import_loop(package: str) -> None:
    assert import_loops(package) == []


def test_the_node_api_and_views_never_name_the_service() -> None:
    """The service builds the view and the app over it; handlers read the node through
    ``NodeView`` and the view reads the service through its own protocol, never its type."""
    paths = [PACKAGE / "node" / f"{name}.py" for name in (*NODE_API, "view", "venue_view")]
    offenders = {path.name: sorted(m for m in imported(path) if within(m, ("spine.node.service",))) for path in paths}
    assert {name: names for name, names in offenders.items() if names} == {}
