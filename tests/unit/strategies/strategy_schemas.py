"""Schema validation for the strategy tests: jsonschema's plain Draft202012Validator over the
spec set, with a referencing registry built here (pinned decision 8)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import referencing
from jsonschema import Draft202012Validator
from referencing.jsonschema import DRAFT202012

SCHEMAS = Path(__file__).resolve().parents[3] / "schemas"
LOADED = {p.name: json.loads(p.read_bytes()) for p in SCHEMAS.glob("*.json")}
REGISTRY = referencing.Registry().with_resources((s["$id"], DRAFT202012.create_resource(s)) for s in LOADED.values())


def schema_errors(name: str, document: Any) -> list[str]:
    """Every error of ``document`` against ``schemas/<name>.json``."""
    validator = Draft202012Validator(LOADED[f"{name}.json"], registry=REGISTRY)
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(document)]
