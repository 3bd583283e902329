"""The tool table: one tool per v2 operation some process serves, generated from the route
table (the rows the capability registry is made of). ``spine tools`` lists it to agents,
``spine client`` turns it into commands and ``spine.client.Client`` into methods, so a route
added to the table appears in all three. A tool's name is the registry's ``tool`` field of its
operation; its input schema is the gateway's OpenAPI parameters and body, its description the
route's summary."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from spine.http.openapi import openapi_document
from spine.http.routes import OPERATIONS, Operation
from spine.http.summaries import SUMMARIES

__all__ = [
    "BATCH_EVENTS",
    "BATCH_SECONDS",
    "MAX_ARGUMENT_BYTES",
    "MAX_BATCH_EVENTS",
    "MAX_BATCH_SECONDS",
    "Tool",
    "tool",
    "tools",
]

#: The spec's limit on a tool's config argument: its arguments object, serialised as compact
#: JSON, is at most this many bytes (docs/contract.md, "Tools and clients").
MAX_ARGUMENT_BYTES = 65_536
#: A stream-backed tool returns a bounded batch: at most this many events (heartbeats not
#: counted) within this many seconds, defaults first.
BATCH_EVENTS, MAX_BATCH_EVENTS = 100, 1_000
BATCH_SECONDS, MAX_BATCH_SECONDS = 10, 60

_OPEN = re.compile(r"\{([a-z_]+)\}")
_COMPONENTS = "#/components/schemas/"


@dataclass(frozen=True)
class Tool:
    name: str
    operation: str
    effect: Literal["QUERY", "COMMAND", "STREAM"]
    method: str
    path: str
    #: The path's placeholders, in order (each a required string argument).
    path_params: tuple[str, ...]
    query_params: tuple[str, ...]
    required: tuple[str, ...]
    #: Whether it takes a POST body (the ``body`` argument, a JSON object).
    body: bool
    description: str
    input_schema: dict[str, Any]
    #: The document a successful answer carries (None: an untagged one, a schema or OpenAPI).
    document: str | None = None
    #: The document a 409 carries instead of the error envelope.
    conflict: str | None = None

    @property
    def stream(self) -> bool:
        return self.effect == "STREAM"

    @property
    def paged(self) -> bool:
        return "cursor" in self.query_params

    @property
    def arguments(self) -> tuple[str, ...]:
        """Every argument it takes, path first, then the query, the body and a batch's bounds."""
        batch = ("max_events", "seconds") if self.stream else ()
        return (*self.path_params, *self.query_params, *(("body",) if self.body else ()), *batch)


@cache
def tools() -> tuple[Tool, ...]:
    """Every tool, in the route table's order."""
    document = openapi_document(OPERATIONS, "gateway")
    return tuple(_tool(op, document) for op in OPERATIONS if op.tool is not None)


@cache
def _by_name() -> dict[str, Tool]:
    return {t.name: t for t in tools()}


def tool(name: str) -> Tool:
    """The tool ``name`` (KeyError for a name the table lacks)."""
    return _by_name()[name]


def _tool(op: Operation, document: dict[str, Any]) -> Tool:
    assert op.tool is not None
    spec = document["paths"][op.path][op.method.lower()]
    path_params = tuple(_OPEN.findall(op.path))
    properties: dict[str, Any] = {}
    for parameter in spec["parameters"]:
        name = parameter["name"]
        if parameter["in"] == "path":
            properties[name] = {"type": "string", "minLength": 1, "description": f"the {{{name}}} of {op.path}"}
        else:
            properties[name] = dict(parameter["schema"])
    required = [*path_params, *op.required]
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if "requestBody" in spec:
        ref = spec["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        properties["body"] = {"$ref": ref.replace(_COMPONENTS, "#/$defs/"), "description": "the POST body"}
        required.append("body")
        schema["$defs"] = _definitions(ref.removeprefix(_COMPONENTS), document["components"]["schemas"])
    if op.effect == "STREAM":
        properties["max_events"] = _bound("events to return (heartbeats not counted)", BATCH_EVENTS, MAX_BATCH_EVENTS)
        properties["seconds"] = _bound("seconds to wait for them", BATCH_SECONDS, MAX_BATCH_SECONDS)
    schema["required"] = required
    return Tool(
        name=op.tool,
        operation=op.id,
        effect=op.effect,
        method=op.method,
        path=op.path,
        path_params=path_params,
        query_params=op.params,
        required=tuple(required),
        body="body" in properties,
        description=_description(op),
        input_schema=schema,
        document=None if op.effect == "STREAM" else op.document_of("gateway"),
        conflict=op.conflict,
    )


def _bound(what: str, default: int, most: int) -> dict[str, Any]:
    return {
        "type": "integer",
        "minimum": 1,
        "maximum": most,
        "default": default,
        "description": f"at most this many {what}",
    }


def _description(op: Operation) -> str:
    notes = [SUMMARIES[op.id]]
    if op.effect == "COMMAND":
        notes.append("A command: the gateway refuses it (403) unless its host is private-operator.")
    if op.effect == "STREAM":
        notes.append(
            f"Returns the events of a bounded read of the stream: at most max_events (default {BATCH_EVENTS}, "
            f"at most {MAX_BATCH_EVENTS}) within seconds (default {BATCH_SECONDS}, at most {MAX_BATCH_SECONDS})."
        )
    if "cursor" in op.params:
        notes.append("Paged: pass a page's next cursor as cursor for the next page.")
    notes.append("Decimals and timestamps are strings; floats are refused.")
    return " ".join(notes)


def _definitions(name: str, components: dict[str, Any]) -> dict[str, Any]:
    """The component ``name`` and every component it reaches, with references re-pointed at
    ``#/$defs/`` (an input schema is self-contained)."""
    found: dict[str, Any] = {}
    waiting = [name]
    while waiting:
        current = waiting.pop()
        if current in found:
            continue
        found[current] = _repointed(components[current], waiting)
    return found


def _repointed(part: Any, waiting: list[str]) -> Any:
    if isinstance(part, dict):
        out = {}
        for key, value in part.items():
            if key == "$ref" and isinstance(value, str) and value.startswith(_COMPONENTS):
                target = value.removeprefix(_COMPONENTS)
                # A document component's own ``$defs`` are reached through it; only its name is new.
                waiting.append(target.split("/", 1)[0])
                out[key] = "#/$defs/" + target
            else:
                out[key] = _repointed(value, waiting)
        return out
    if isinstance(part, list):
        return [_repointed(v, waiting) for v in part]
    return part
