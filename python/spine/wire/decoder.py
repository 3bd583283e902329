"""The client-side decoder (spec, "Errors": client-side decode).

A document is checked, in order, for (1) object shape, (2) schema-tag presence, (3) vendored
schema, (4) schema_id match, (5) supported wire version and (6) structural validation. The
first failing step raises its own :class:`ContractViolation` subclass, whose message names
the step. A document is never repaired: nothing is defaulted, coerced or dropped, and what
passes is returned as given.
"""

from __future__ import annotations

import json
from typing import Any

from jsonschema.exceptions import best_match, relevance  # type: ignore[import-untyped]

from spine._core import WIRE_VERSION, canonical_json, canonicalize
from spine.errors import CanonicalJsonError, SpineError
from spine.schemas import UnknownSchemaError, all_schemas, fast_validator_for, validator_for

__all__ = [
    "ContractViolation",
    "NotAnObject",
    "MissingSchemaTag",
    "UnsupportedSchema",
    "SchemaIdMismatch",
    "UnsupportedWireVersion",
    "StructuralViolation",
    "decode",
    "decode_error_body",
]

ERROR_ENVELOPE = "svc.error_envelope"


class ContractViolation(SpineError, ValueError):
    """A received document that breaks the contract; surfaced, never repaired."""

    symbol = "CONTRACT_VIOLATION"
    step: int = 0
    step_name: str = ""

    def __init__(self, reason: str) -> None:
        super().__init__(f"CONTRACT_VIOLATION: step {self.step} ({self.step_name}): {reason}")
        self.reason = reason


class NotAnObject(ContractViolation):
    step, step_name = 1, "object shape"


class MissingSchemaTag(ContractViolation):
    step, step_name = 2, "schema-tag presence"


class UnsupportedSchema(ContractViolation):
    step, step_name = 3, "vendored schema"


class SchemaIdMismatch(ContractViolation):
    step, step_name = 4, "schema_id match"


class UnsupportedWireVersion(ContractViolation):
    step, step_name = 5, "supported wire version"


class StructuralViolation(ContractViolation):
    step, step_name = 6, "structural validation"


def _object(document: bytes | bytearray | memoryview | str | dict[str, Any]) -> dict[str, Any]:
    # Step 1. The strict parser in spine._core refuses what a wire document may never hold:
    # floats (the wire has none, and a float would pass an "integer" schema as 1.0), duplicate
    # keys, lone surrogates, invalid UTF-8 and integers outside 64 bit. A dict gets the same
    # checks by being canonicalised; the result is discarded and the dict returned untouched.
    try:
        if isinstance(document, dict):
            canonical_json(document)
            return document
        if isinstance(document, (bytearray, memoryview)):
            document = bytes(document)  # JSON text read into a buffer is still JSON text
        if isinstance(document, (bytes, str)):
            value = json.loads(canonicalize(document))
        else:
            raise NotAnObject(f"expected JSON text (str, bytes) or a dict, got {type(document).__name__}")
    except CanonicalJsonError as error:
        raise NotAnObject(f"not a wire JSON value: {error}") from error
    if not isinstance(value, dict):
        raise NotAnObject(f"the JSON value is a {type(value).__name__}, not an object")
    return value


def _tags(document: dict[str, Any]) -> tuple[str, int]:
    # Step 2. bool is an int subclass; `true` is not a schema_version.
    schema_id, schema_version = document.get("schema_id"), document.get("schema_version")
    if not isinstance(schema_id, str):
        hint = " (an error body? use decode_error_body)" if "error" in document else ""
        raise MissingSchemaTag(f"schema_id is missing or not a string: {schema_id!r}{hint}")
    if not isinstance(schema_version, int) or isinstance(schema_version, bool):
        raise MissingSchemaTag(f"schema_version is missing or not an integer: {schema_version!r}")
    return schema_id, schema_version


def _check_version(document: dict[str, Any]) -> None:
    # Step 5.
    if document.get("version") != WIRE_VERSION:
        raise UnsupportedWireVersion(f"version is {document.get('version')!r}, expected {WIRE_VERSION!r}")


def _discriminator(branches: Any) -> str | None:
    """The property every branch of a closed union pins with a ``const`` (``kind`` of a
    feature value, ``op`` of a delta operation), if there is one."""
    if not isinstance(branches, list) or not branches:
        return None
    shared: set[str] | None = None
    for branch in branches:
        properties = branch.get("properties", {}) if isinstance(branch, dict) else {}
        pinned = {name for name, rule in properties.items() if isinstance(rule, dict) and "const" in rule}
        shared = pinned if shared is None else shared & pinned
    return min(shared) if shared else None


def _cause(errors: list[Any]) -> tuple[str, str]:
    """The path and message of the real defect among ``errors`` (not empty).

    jsonschema reports a failed ``oneOf`` as "not valid under any of the given schemas" or,
    through best_match, as another variant's discriminator ("'RETIRE' was expected" for an
    UPSERT missing its value). For a closed union tagged by a ``const`` property (a feature
    value's ``kind``, a delta operation's ``op``) the variant the document names is the one
    whose defect is reported, and a tag outside the union is reported as such, naming the
    allowed tags. Other errors are chosen as best_match chooses them.
    """
    error = max(errors, key=relevance)
    while error.validator in ("oneOf", "anyOf") and error.context:
        tag = _discriminator(error.validator_value)
        if tag is None:
            error = best_match([error])
            break
        allowed = [branch["properties"][tag]["const"] for branch in error.validator_value]
        shown = ", ".join(repr(a) for a in allowed)
        instance = error.instance
        if not isinstance(instance, dict):
            return error.json_path, f"{instance!r} is not an object; expected an object with {tag!r} one of {shown}"
        if tag not in instance:
            return error.json_path, f"{tag!r} is missing; allowed: {shown}"
        if instance[tag] not in allowed:
            return f"{error.json_path}.{tag}", f"{instance[tag]!r} is not one of {shown}"
        chosen = allowed.index(instance[tag])
        branch = [e for e in error.context if e.relative_schema_path[0] == chosen]
        if not branch:
            break
        error = min(branch, key=relevance)
    return error.json_path, error.message


def _validate(document: dict[str, Any], schema_id: str, schema_version: int) -> None:
    # Step 6. jsonschema-rs says whether the document is valid (a page of bars in milliseconds);
    # jsonschema, only for a refused one, names one real cause (see _cause).
    fast = fast_validator_for(schema_id, schema_version)
    if fast.is_valid(document):
        return
    errors = list(validator_for(schema_id, schema_version).iter_errors(document))
    if errors:
        path, message = _cause(errors)
    else:  # the two validators disagree: the stricter one's first error is the cause
        first = next(iter(fast.iter_errors(document)))
        path, message = (
            "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first.instance_path),
            first.message,
        )
    raise StructuralViolation(f"{schema_id} v{schema_version} at {path}: {message}")


def decode(document: bytes | bytearray | memoryview | str | dict[str, Any], expected_schema_id: str) -> dict[str, Any]:
    """Check a received document against the contract and return it unchanged.

    # Errors
    The :class:`ContractViolation` subclass of the first failing step;
    :class:`~spine.schemas.UnknownSchemaError` when ``expected_schema_id`` itself is not a
    supported schema id (a caller bug, raised before the document is looked at).
    """
    if not any(sid == expected_schema_id for sid, _ in all_schemas()):
        raise UnknownSchemaError(f"UNKNOWN_SCHEMA: expected_schema_id {expected_schema_id!r} is not supported")
    value = _object(document)
    schema_id, schema_version = _tags(value)
    if (schema_id, schema_version) not in all_schemas():
        raise UnsupportedSchema(f"({schema_id!r}, {schema_version}) is not in the supported registry")
    if schema_id != expected_schema_id:
        raise SchemaIdMismatch(f"schema_id is {schema_id!r}, expected {expected_schema_id!r}")
    _check_version(value)
    _validate(value, schema_id, schema_version)
    return value


def decode_error_body(document: bytes | bytearray | memoryview | str | dict[str, Any]) -> dict[str, Any]:
    """Check a v2 error body and return it unchanged.

    The pinned error body carries no schema tags, so steps 2 to 4 do not apply: it is checked
    for object shape, wire version and structure against ``svc.error_envelope``.

    # Errors
    :class:`NotAnObject`, :class:`UnsupportedWireVersion` or :class:`StructuralViolation`.
    """
    value = _object(document)
    _check_version(value)
    _validate(value, ERROR_ENVELOPE, 1)
    return value
