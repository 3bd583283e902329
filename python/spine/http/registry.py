"""The capability registry (``svc.capability_registry``) of one process, from the route table:
each operation's availability there (spec, "Capability registry")."""

from __future__ import annotations

from typing import Any

from spine._core import WIRE_VERSION
from spine.http.routes import OPERATIONS, Operation, Process, serving

__all__ = ["registry_document", "registry_entry"]

_AVAILABILITY = {"handler": "READY", "deferred": "UNAVAILABLE", "elsewhere": "UNSUPPORTED"}


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
    return {"id": op.id, "wire_version": op.wire_version, "effect": op.effect, "method": op.method,
            "path": op.path, "tool": op.tool, "schema_ids": list(op.schema_ids), "providers": list(op.providers),
            "requires_paper": op.requires_paper, "requires_confirmation": op.requires_confirmation,
            "availability": availability}


def registry_document(node_id: str, process: Process, *, deployment_mode: str, warming: bool) -> dict[str, Any]:
    return {"version": WIRE_VERSION, "schema_id": "svc.capability_registry", "schema_version": 1, "node_id": node_id,
            "operations": [registry_entry(op, process, deployment_mode=deployment_mode, warming=warming)
                           for op in OPERATIONS]}
