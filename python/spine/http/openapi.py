"""The OpenAPI 3.1 document, generated from the route table (the same rows that build the
router and the capability registry). Response schemas reference the published JSON Schemas by
their ``$id``; POST bodies reference ``components.schemas``, generated from the sealed Structs
the app decodes them with; every error answers with the error envelope."""

from __future__ import annotations

import re
from typing import Any

import msgspec

from spine.http.bodies import DocumentBody, body_schemas
from spine.http.request import Query
from spine.http.routes import BAR_PAGE_MAX, OPERATIONS, Operation, Process, Serving, serving
from spine.http.summaries import SUMMARIES
from spine.wire.bar_types import BAR_RESOLUTIONS
from spine.wire.cursors import MAX_LIMIT, MIN_LIMIT

__all__ = ["OpenApiHandlers", "openapi_document"]

SCHEMA_BASE = "https://schemas.spine.invalid/"
_COMPONENT = "#/components/schemas/{name}"
_TITLES = {
    "node": "Spine venue node",
    "screener": "Spine screener",
    "gateway": "Spine gateway",
    "paper": "Spine paper node",
}
_PARAM = re.compile(r"\{([a-z_]+)\}")
_QUERY_SCHEMAS: dict[str, dict[str, Any]] = {
    "instrument_id": {"type": "string", "pattern": "^[!-~]+\\.[A-Z][A-Z0-9_]*$", "maxLength": 128},
    "bar_type": {"type": "string"},
    "start": {"type": "string", "pattern": "^(0|[1-9][0-9]*)$"},
    "end": {"type": "string", "pattern": "^(0|[1-9][0-9]*)$"},
    "after_sequence": {"type": "string", "pattern": "^(0|[1-9][0-9]*)$"},
    "limit": {"type": "integer", "minimum": MIN_LIMIT, "maximum": MAX_LIMIT},
    "cursor": {"type": "string"},
    "kind": {"type": "string", "enum": ["mark_price", "index_price", "funding_rate", "liquidation"]},
    "resolution": {"type": "string", "enum": list(BAR_RESOLUTIONS)},
    "channel": {"type": "string", "enum": ["EXTERNAL", "INTERNAL"]},
    "name": {"type": "string"},
    "job_id": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
    "revision_id": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
    "strategy_id": {"type": "string", "pattern": "^[a-z][a-z0-9_]{0,63}$"},
    "state": {"type": "string", "enum": ["QUEUED", "RUNNING", "COMPLETED", "FAILED", "CANCELLED"]},
}


class OpenApiHandlers:
    """``GET /v2/openapi.json``: the process's document, encoded once (the route table does
    not change while the process runs)."""

    def __init__(self, process: Process) -> None:
        self.document = msgspec.json.encode(openapi_document(OPERATIONS, process))

    def openapi_get(self, query: Query, params: dict[str, str]) -> bytes:
        return self.document


def _responses(op: Operation, how: Serving, process: Process) -> dict[str, Any]:
    envelope = "v1/v1.error_envelope.json" if op.wire_version == "v1" else "svc.error_envelope.json"
    error = {
        "description": "error envelope",
        "content": {"application/json": {"schema": {"$ref": SCHEMA_BASE + envelope}}},
    }
    if how != "handler":
        status = "501" if how == "deferred" else "404"
        return {status: error}
    if op.effect == "STREAM":
        ok: dict[str, Any] = {"description": "Server-Sent Events", "content": {"text/event-stream": {}}}
    elif (document := op.document_of(process)) is not None:
        file = f"v1/{document}.json" if op.wire_version == "v1" else f"{document}.json"
        ok = {"description": document, "content": {"application/json": {"schema": {"$ref": SCHEMA_BASE + file}}}}
    else:
        ok = {"description": "document", "content": {"application/json": {"schema": {"type": "object"}}}}
    statuses = ["400", "404", "403", "409"] if op.effect == "COMMAND" else ["400", "404", "409"]
    if op.awaits_discovery:
        statuses.append("503")
    answers = {str(op.status): ok, **dict.fromkeys(statuses, error)}
    if op.conflict is not None:
        answers["409"] = {
            "description": op.conflict,
            "content": {"application/json": {"schema": {"$ref": SCHEMA_BASE + op.conflict + ".json"}}},
        }
    return answers


def _query_schema(op: Operation, name: str) -> dict[str, Any]:
    """A query parameter's schema; a bar page's ``limit`` goes higher than a list's."""
    if name == "limit" and "bar_type" in op.params:
        return {**_QUERY_SCHEMAS["limit"], "maximum": BAR_PAGE_MAX}
    return _QUERY_SCHEMAS[name]


def openapi_document(operations: tuple[Operation, ...], process: Process) -> dict[str, Any]:
    """The OpenAPI document of ``process``: every route, answered as that process answers it."""
    paths: dict[str, dict[str, Any]] = {}
    for op in operations:
        parameters = [
            {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
            for name in _PARAM.findall(op.path)
        ]
        parameters += [
            {"name": name, "in": "query", "required": name in op.required, "schema": _query_schema(op, name)}
            for name in op.params
        ]
        operation: dict[str, Any] = {
            "operationId": op.id,
            "summary": SUMMARIES[op.id],
            "parameters": parameters,
            "responses": _responses(op, serving(op, process), process),
        }
        how = serving(op, process)
        if op.body is not None and how == "handler":
            name = op.body.schema_id if isinstance(op.body, DocumentBody) else op.body.__name__
            operation["requestBody"] = {
                "required": True,
                "content": {"application/json": {"schema": {"$ref": _COMPONENT.format(name=name)}}},
            }
        paths.setdefault(op.path, {})[op.method.lower()] = operation
    documents = {
        op.body.schema_id: _component(op.body.schema_id, op.body.schema_version)
        for op in operations
        if isinstance(op.body, DocumentBody) and serving(op, process) == "handler"
    }
    return {
        "openapi": "3.1.0",
        "info": {"title": _TITLES[process], "version": "spine.v2"},
        "paths": paths,
        "components": {"schemas": {**body_schemas(_COMPONENT), **documents}},
    }


def _component(schema_id: str, schema_version: int) -> dict[str, Any]:
    """A published document's schema as a component: its own ``#/$defs/...`` references
    re-pointed at the component (a fuzzer generates bodies from it without fetching)."""
    from spine.schemas import all_schemas

    prefix = _COMPONENT.format(name=schema_id) + "/$defs/"

    def moved(part: Any) -> Any:
        if isinstance(part, dict):
            return {
                k: (
                    prefix + v.removeprefix("#/$defs/")
                    if k == "$ref" and isinstance(v, str) and v.startswith("#/$defs/")
                    else moved(v)
                )
                for k, v in part.items()
                if k != "$id"
            }
        if isinstance(part, list):
            return [moved(v) for v in part]
        return part

    return moved(all_schemas()[(schema_id, schema_version)])  # type: ignore[no-any-return]
