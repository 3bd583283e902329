"""The wire layer: error codes and bodies, paging cursors, document producers, bar names, and
the client-side decoder. The JSON Schemas under ``schemas/`` are the contract for every
document; nothing here restates them.

A table of contents; the logic lives in the submodules. The package exports the decoder's
names (``spine.wire.decoder.__all__``) and the error table's.
"""

from __future__ import annotations

from spine.wire import decoder
from spine.wire.decoder import *  # noqa: F403 - exactly decoder.__all__
from spine.wire.errors import ERROR_CODES, ErrorCode, UnknownErrorSymbol, error_body

__all__ = [*decoder.__all__, "ERROR_CODES", "ErrorCode", "UnknownErrorSymbol", "error_body"]
