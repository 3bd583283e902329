"""The published schema sets: loading, the supported registry and the two digests.

``schemas/`` holds the spec's set of 58 documents (spec, "Versioning" 3), whose digest is the
schema-set digest; ``schemas/own/`` holds the project's own documents (health, status, pages,
the heartbeat, ...) with a digest of their own. The supported ``(schema_id, schema_version)``
registry is both sets, read from each file's own constants, never from a list kept in code;
each digest covers its files' raw bytes, so any edit to a file changes it.
``python/spine/_schemas`` links to ``schemas/`` and ships inside the wheel.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any, Protocol

import referencing
from jsonschema import Draft202012Validator, ValidationError, validators  # type: ignore[import-untyped]
from referencing.jsonschema import DRAFT202012

from spine.errors import SpineError

__all__ = [
    "OWN_SCHEMA_BASE_URI",
    "OWN_SCHEMA_DIR",
    "SCHEMA_BASE_URI",
    "SCHEMA_DIR",
    "SchemaKey",
    "SchemaSet",
    "SchemaSetError",
    "SchemaValidator",
    "UnknownSchemaError",
    "all_schemas",
    "load_schema_set",
    "own_schema_set",
    "own_schema_set_digest",
    "schema_set",
    "schema_set_digest",
    "validator_for",
]

SCHEMA_BASE_URI = "https://schemas.spine.invalid/"
SCHEMA_DIR = Path(__file__).parent / "_schemas"
#: The project's own documents: ``$id`` under ``own/``; a ``$ref`` into the spec set is ``../<file>``.
OWN_SCHEMA_BASE_URI = SCHEMA_BASE_URI + "own/"
OWN_SCHEMA_DIR = SCHEMA_DIR / "own"

SchemaKey = tuple[str, int]
Schema = dict[str, Any]


class SchemaSetError(SpineError):
    """The schema directory is not a valid schema set (the message names the file)."""

    symbol = "INVALID_SCHEMA_SET"


class UnknownSchemaError(SpineError, LookupError):
    """A ``(schema_id, schema_version)`` outside the supported registry."""

    symbol = "UNKNOWN_SCHEMA"


class SchemaValidator(Protocol):
    """What callers use of a jsonschema validator (jsonschema ships no type information)."""

    schema: Schema

    def iter_errors(self, instance: object) -> Iterator[ValidationError]: ...

    def is_valid(self, instance: object) -> bool: ...

    def validate(self, instance: object) -> None: ...


@dataclass(frozen=True)
class SchemaSet:
    """Every schema of one directory, keyed by its constants, and the digest of the files."""

    schemas: Mapping[SchemaKey, Schema]
    digest: str


def _constant(schema: object, name: str, kind: type, path: Path) -> Any:
    value: object = schema
    for step in ("properties", name, "const"):
        value = value.get(step) if isinstance(value, dict) else None
    # bool is an int subclass; a schema_version of `true` is not an integer constant.
    if not isinstance(value, kind) or isinstance(value, bool):
        raise SchemaSetError(
            f"INVALID_SCHEMA_SET: {path.name}: properties.{name}.const must be a {kind.__name__}",
            path=str(path),
        )
    return value


def load_schema_set(directory: Path, base_uri: str = SCHEMA_BASE_URI) -> SchemaSet:
    """Load every ``*.json`` file of ``directory`` (uncached; :func:`schema_set` caches).

    # Errors
    :class:`SchemaSetError` for unreadable JSON, a missing ``schema_id`` / ``schema_version``
    constant, an ``$id`` other than ``base_uri + <file name>`` (a relative ``$ref`` names a
    file), a duplicate key, or an empty directory.
    """
    files = sorted(directory.glob("*.json"), key=lambda p: p.name)
    if not files:
        raise SchemaSetError(f"INVALID_SCHEMA_SET: no *.json files in {directory}", path=str(directory))
    hasher = hashlib.sha256()
    schemas: dict[SchemaKey, Schema] = {}
    for path in files:
        raw = path.read_bytes()
        hasher.update(raw)
        try:
            schema = json.loads(raw)
        except ValueError as error:
            message = f"INVALID_SCHEMA_SET: {path.name}: not JSON: {error}"
            raise SchemaSetError(message, path=str(path)) from error
        key = (_constant(schema, "schema_id", str, path), _constant(schema, "schema_version", int, path))
        if schema.get("$id") != f"{base_uri}{path.name}":
            raise SchemaSetError(f"INVALID_SCHEMA_SET: {path.name}: $id must be {base_uri}{path.name}", path=str(path))
        if key in schemas:
            raise SchemaSetError(f"INVALID_SCHEMA_SET: {path.name}: duplicate {key}", path=str(path))
        schemas[key] = schema
    return SchemaSet(schemas=MappingProxyType(schemas), digest=hasher.hexdigest())


@cache
def schema_set() -> SchemaSet:
    """The spec's schema set (58 documents) shipped with the package."""
    return load_schema_set(SCHEMA_DIR)


@cache
def own_schema_set() -> SchemaSet:
    """The project's own documents shipped with the package."""
    return load_schema_set(OWN_SCHEMA_DIR, OWN_SCHEMA_BASE_URI)


@cache
def all_schemas() -> Mapping[SchemaKey, Schema]:
    """The supported registry ``{(schema_id, schema_version): schema}``: both sets. Do not mutate.

    # Errors
    :class:`SchemaSetError` when a schema id is in both sets (files are served by name, and
    ``<schema_id>.json`` would then name two files).
    """
    spec, own = schema_set().schemas, own_schema_set().schemas
    both = sorted({sid for sid, _ in spec} & {sid for sid, _ in own})
    if both:
        raise SchemaSetError(f"INVALID_SCHEMA_SET: {both[0]} is in both the spec set and the own set")
    return MappingProxyType({**spec, **own})


def schema_set_digest() -> str:
    """The schema-set digest: SHA-256 (lowercase hex) over the spec set's files' bytes, in
    file-name order."""
    return schema_set().digest


def own_schema_set_digest() -> str:
    """The own set's digest, computed the same way over ``schemas/own/``."""
    return own_schema_set().digest


# validation


@cache
def _ecma_regex(pattern: str) -> re.Pattern[str]:
    # JSON Schema regexes are ECMA-262, where `$` (no multiline flag) matches only at the end of
    # the input. Python's `$` also matches before a final "\n", so "12\n" would pass as a
    # nanosecond timestamp. Rewrite each unescaped `$` outside a character class to `\Z`.
    out: list[str] = []
    escaped = in_class = False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "[":
            in_class = True
        elif char == "]":
            in_class = False
        elif char == "$" and not in_class:
            out.append(r"\Z")
            continue
        out.append(char)
    return re.compile("".join(out))


def _pattern(validator: Any, pattern: str, instance: object, schema: Schema) -> Iterator[ValidationError]:
    if isinstance(instance, str) and not _ecma_regex(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _is_integer(checker: Any, instance: object) -> bool:
    # Draft 2020-12 lets 1.0 count as an integer; the wire holds no floats at all.
    return isinstance(instance, int) and not isinstance(instance, bool)


_TYPE_CHECKER = Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_integer)
_SpineValidator: Callable[..., SchemaValidator] = validators.extend(
    Draft202012Validator, validators={"pattern": _pattern}, type_checker=_TYPE_CHECKER
)


@cache
def _registry() -> referencing.Registry[Any]:
    # Every file of both sets is registered under its $id, so a relative "$ref":
    # "svc.series_coverage.json" (or "../svc.instrument_ref.json" from the own set) resolves
    # offline, without any retrieval.
    resources = [(schema["$id"], DRAFT202012.create_resource(schema)) for schema in all_schemas().values()]
    return referencing.Registry().with_resources(resources)


def _resolve_key(schema_id: str, schema_version: int | None) -> SchemaKey:
    versions = sorted(v for (sid, v) in all_schemas() if sid == schema_id)
    if not versions or (schema_version is not None and schema_version not in versions):
        raise UnknownSchemaError(
            f"UNKNOWN_SCHEMA: ({schema_id!r}, {schema_version!r}) is not in the supported registry"
        )
    return (schema_id, versions[-1] if schema_version is None else schema_version)


def validator_for(schema_id: str, schema_version: int | None = None) -> SchemaValidator:
    """A draft 2020-12 validator for one schema (``schema_version=None``: the newest).

    ECMA-262 ``$`` semantics and integers that exclude floats, over a registry holding every
    file of the set.

    # Errors
    :class:`UnknownSchemaError` when the pair is not in the supported registry.
    """
    return _validator(_resolve_key(schema_id, schema_version))


@cache
def _validator(key: SchemaKey) -> SchemaValidator:
    return _SpineValidator(all_schemas()[key], registry=_registry())


def fast_validator_for(schema_id: str, schema_version: int | None = None) -> Any:
    """The same schema compiled by jsonschema-rs (Rust; ECMA-262 patterns): about a hundred
    times faster on a 5,000-bar page (benches/clients/bench_decode.py). It says whether a
    document is valid; :func:`validator_for` describes why one is not.

    # Errors
    :class:`UnknownSchemaError` when the pair is not in the supported registry.
    """
    return _fast_validator(_resolve_key(schema_id, schema_version))


@cache
def _fast_registry() -> Any:
    import jsonschema_rs

    return jsonschema_rs.Registry([(schema["$id"], schema) for schema in all_schemas().values()])


@cache
def _fast_validator(key: SchemaKey) -> Any:
    import jsonschema_rs

    return jsonschema_rs.Draft202012Validator(all_schemas()[key], registry=_fast_registry(), validate_formats=False)
