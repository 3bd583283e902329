"""The wire layer: error codes and bodies, paging cursors, document producers, bar names, and
the client-side decoder. The JSON Schemas under ``schemas/`` are the contract for every
document; nothing here restates them.

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
from spine.wire.errors import ERROR_CODES, ErrorCode, UnknownErrorSymbol, error_body

__all__ = [
    "ERROR_CODES",
    "ContractViolation",
    "ErrorCode",
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
