"""The wire layer: error codes and bodies, document Structs, and the client-side decoder.

A table of contents; the logic lives in the submodules.
"""

from __future__ import annotations

from spine.wire.decoder import (
    ContractViolation,
    MissingSchemaTag,
    NotAnObject,
    SchemaIdMismatch,
    StructuralViolation,
    UnsupportedSchema,
    UnsupportedWireVersion,
    decode,
    decode_error_body,
)
from spine.wire.documents import DOCUMENT_TYPES, ErrorEnvelope
from spine.wire.errors import ERROR_CODES, ErrorCode, UnknownErrorSymbol, error_body

__all__ = [
    "DOCUMENT_TYPES",
    "ERROR_CODES",
    "ContractViolation",
    "ErrorCode",
    "ErrorEnvelope",
    "MissingSchemaTag",
    "NotAnObject",
    "SchemaIdMismatch",
    "StructuralViolation",
    "UnknownErrorSymbol",
    "UnsupportedSchema",
    "UnsupportedWireVersion",
    "decode",
    "decode_error_body",
    "error_body",
]
