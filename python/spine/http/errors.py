"""One app error type, turned into one response shape: the v2 error envelope of pinned
decision 5 with the published code table. Internals are logged, never returned."""

from __future__ import annotations

from spine.wire.errors import ERROR_CODES, error_body

__all__ = ["HttpError", "error_response"]


class HttpError(Exception):
    """A refusal with its table symbol and a detail naming what was wrong and what is allowed."""

    def __init__(self, symbol: str, text: str, headers: tuple[tuple[str, str], ...] = ()) -> None:
        super().__init__(f"{symbol}: {text}")
        self.symbol = symbol
        self.text = text
        #: Response headers the refusal carries (a 503's ``retry-after``).
        self.headers = headers

    @property
    def status(self) -> int:
        return ERROR_CODES[self.symbol].http_status


def error_response(error: HttpError) -> tuple[int, dict[str, object]]:
    return error.status, error_body(error.symbol, error.text)
