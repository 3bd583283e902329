"""The capability registry (``svc.capability_registry``) of one process, from the route table:
each operation's availability there (spec, "Capability registry").

The static registry (``docs/registry.json``, spec "Versioning" 5) is every process's registry
with the volatile parts normalised: no node id, not warming, the default deployment mode.
``python -m spine.http.registry --write`` regenerates it from the route tables; ``--check``
(and a unit test) fails when the committed file and the tables disagree.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, get_args

from spine._core import WIRE_VERSION
from spine.http.routes import OPERATIONS, Operation, Process, serving

__all__ = [
    "STATIC_DEPLOYMENT_MODE",
    "STATIC_REGISTRY_PATH",
    "registry_document",
    "registry_entry",
    "static_registry",
    "static_registry_text",
]

_AVAILABILITY = {"handler": "READY", "deferred": "UNAVAILABLE", "elsewhere": "UNSUPPORTED"}
#: The mode an unset or unknown configuration resolves to (pinned decision 7).
STATIC_DEPLOYMENT_MODE = "public-readonly"
#: Relative to the repository root.
STATIC_REGISTRY_PATH = Path("docs") / "registry.json"


def registry_entry(op: Operation, process: Process, *, deployment_mode: str, warming: bool) -> dict[str, Any]:
    """``op`` as ``process`` serves it: READY, WARMING while the process starts, DISABLED when
    a COMMAND is refused by the host's deployment mode (403), UNAVAILABLE when deferred,
    UNSUPPORTED when another process serves it."""
    how = serving(op, process)
    availability = _AVAILABILITY[how]
    if how == "handler" and op.effect == "COMMAND" and deployment_mode != "private-operator":
        availability = "DISABLED"
    elif how == "handler" and warming:
        availability = "WARMING"
    return {
        "id": op.id,
        "wire_version": op.wire_version,
        "effect": op.effect,
        "method": op.method,
        "path": op.path,
        "tool": op.tool,
        "schema_ids": list(op.schema_ids),
        "providers": list(op.providers),
        "requires_paper": op.requires_paper,
        "requires_confirmation": op.requires_confirmation,
        "availability": availability,
    }


def registry_document(node_id: str, process: Process, *, deployment_mode: str, warming: bool) -> dict[str, Any]:
    return {
        "version": WIRE_VERSION,
        "schema_id": "svc.capability_registry",
        "schema_version": 1,
        "node_id": node_id,
        "operations": [
            registry_entry(op, process, deployment_mode=deployment_mode, warming=warming) for op in OPERATIONS
        ],
    }


def static_registry() -> dict[str, list[dict[str, Any]]]:
    """Each process of ``Process`` (in its order) with its registry's operations, as a
    process that has finished warming reports them in the default deployment mode."""
    return {
        process: registry_document(process, process, deployment_mode=STATIC_DEPLOYMENT_MODE, warming=False)[
            "operations"
        ]
        for process in get_args(Process)
    }


def static_registry_text() -> str:
    """The committed file's text: one operation per line, so a change reads as one line."""
    processes = [
        f'    "{process}": [\n' + ",\n".join("      " + json.dumps(op) for op in operations) + "\n    ]"
        for process, operations in static_registry().items()
    ]
    body = ",\n".join(processes)
    return (
        f'{{\n  "version": "{WIRE_VERSION}",\n  "deployment_mode": "{STATIC_DEPLOYMENT_MODE}",\n'
        f'  "processes": {{\n{body}\n  }}\n}}\n'
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m spine.http.registry", description="Write or check the static capability registry."
    )
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", action="store_true", help="regenerate the file from the route tables")
    action.add_argument("--check", action="store_true", help="exit 1 when the file and the route tables disagree")
    parser.add_argument(
        "path",
        nargs="?",
        type=Path,
        default=STATIC_REGISTRY_PATH,
        help=f"the file (default: {STATIC_REGISTRY_PATH}, from the repository root)",
    )
    args = parser.parse_args(argv)
    text = static_registry_text()
    if args.write:
        args.path.write_text(text, encoding="utf-8")
        return 0
    if not args.path.exists() or args.path.read_text(encoding="utf-8") != text:
        print(f"{args.path} differs from the route tables; run python -m spine.http.registry --write", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
