"""The wire layer: error codes and bodies, paging cursors, document producers, bar names, and
the client-side decoder. The JSON Schemas under ``schemas/`` are the contract for every
document; nothing here restates them.

A table of contents; the logic lives in the submodules. The package exports the decoder's
names (``spine.wire.decoder.__all__``) and the error table's. The decoder is loaded on first
use of one of its names (module ``__getattr__``): it brings jsonschema and the schema set, which
a server process never needs to decode its own documents.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from spine.wire.errors import ERROR_CODES, ErrorCode, UnknownErrorSymbol, error_body

if TYPE_CHECKING:  # the names __getattr__ serves, for type checkers
    from spine.wire import decoder  # noqa: F401
    from spine.wire.decoder import (  # noqa: F401
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

#: ``spine.wire.decoder.__all__``, named here so the decoder loads only when one is asked.
DECODER_NAMES = (
    "ContractViolation",
    "NotAnObject",
    "MissingSchemaTag",
    "UnsupportedSchema",
    "SchemaIdMismatch",
    "UnsupportedWireVersion",
    "StructuralViolation",
    "decode",
    "decode_error_body",
)

__all__ = [*DECODER_NAMES, "ERROR_CODES", "ErrorCode", "UnknownErrorSymbol", "error_body"]


def __getattr__(name: str) -> Any:
    if name == "decoder" or name in DECODER_NAMES:
        # import_module, not ``from spine.wire import decoder``: that would ask this hook again.
        loaded = importlib.import_module("spine.wire.decoder")
        return loaded if name == "decoder" else getattr(loaded, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
