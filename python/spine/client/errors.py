"""What a client call raises: refused arguments, an unreachable gateway, the gateway's own
error envelope (its status, code and detail, and the answer's bytes), or an answer that breaks
the contract (the client-side decoder's :class:`ContractViolation`, surfaced, never repaired)."""

from __future__ import annotations

from spine.errors import SpineError
from spine.wire.decoder import ContractViolation

__all__ = ["ArgumentError", "ContractViolation", "GatewayError", "GatewayUnreachable"]


class ArgumentError(SpineError, ValueError):
    """A tool's arguments refused before any request: what was wrong and what is allowed."""

    symbol = "INVALID_ARGUMENTS"


class GatewayUnreachable(SpineError, ConnectionError):
    """The gateway did not answer (refused, reset or timed out)."""

    symbol = "GATEWAY_UNREACHABLE"


class GatewayError(SpineError):
    """The gateway answered with an error: ``status``, the envelope's numeric ``code`` and
    ``detail`` (which starts with the condition's symbol), and ``body``, the answer as it came
    (a 409 may carry a conflict document instead of the envelope). ``symbol`` is the
    envelope's condition (its detail's first word); GATEWAY_ERROR for an answer without one."""

    symbol = "GATEWAY_ERROR"

    def __init__(self, status: int, body: bytes, code: int | None, detail: str, symbol: str | None = None) -> None:
        super().__init__(f"HTTP {status}: {detail}", symbol=symbol)
        self.status, self.body, self.code, self.detail = status, body, code, detail
