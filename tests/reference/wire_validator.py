"""An independent check of served documents (pinned decision 8): jsonschema's stock
Draft202012Validator over the files in schemas/, chosen by each document's schema_id. Never
imports spine."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import referencing
from jsonschema import Draft202012Validator
from referencing.jsonschema import DRAFT202012

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "schemas"


@cache
def _validators() -> dict[str, Draft202012Validator]:
    # The v2 schema sets (the spec's in schemas/, ours in schemas/own/), and the v1 documents
    # beside them (schemas/v1/).
    files = [
        *sorted(SCHEMA_DIR.glob("*.json")),
        *sorted(SCHEMA_DIR.glob("own/*.json")),
        *sorted(SCHEMA_DIR.glob("v1/*.json")),
    ]
    loaded = [json.loads(p.read_bytes()) for p in files]
    registry = referencing.Registry().with_resources(
        (schema["$id"], DRAFT202012.create_resource(schema)) for schema in loaded
    )
    out = {}
    for schema in loaded:
        schema_id = schema["properties"]["schema_id"]["const"]
        out[schema_id] = Draft202012Validator(schema, registry=registry)
    return out


def validate(document: dict[str, Any], schema_id: str | None = None) -> None:
    """Raise jsonschema.ValidationError unless ``document`` is valid for its schema."""
    _validators()[schema_id or document["schema_id"]].validate(document)


def put(path: str, value: object) -> Callable[[dict[str, Any]], None]:
    """An edit that sets the value at a dotted ``path`` (list indexes as digits), for showing a
    schema rule holding and broken on a copy of an example."""

    def edit(document: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = document
        for part in parents:
            node = node[int(part)] if part.isdigit() else node[part]
        node[int(last) if last.isdigit() else last] = value

    return edit
