"""The errors strategy authoring raises: each a :class:`spine.errors.SpineError` and a
``ValueError``, its message led by a wire SYMBOL (``"SYMBOL: text"``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from spine.errors import SpineError

if TYPE_CHECKING:
    from spine.strategies.diagnostics import Diagnostic

__all__ = ["StrategyError", "StrategyFileError", "StrategyDocumentError", "ParameterOverrideError"]


class StrategyError(SpineError, ValueError):
    """Root of the authoring refusals."""

    symbol = "INVALID_STRATEGY"

    def __init__(self, text: str, path: str | None = None) -> None:
        super().__init__(f"{self.symbol}: {text}", path=path)


class StrategyFileError(StrategyError):
    """A file path or a file set refused: a path escaping the project, a NUL, a backslash, too
    long, a kind of file not accepted, too many files, too many bytes, no ``strategy.toml``."""

    symbol = "INVALID_STRATEGY_FILE"


class StrategyDocumentError(StrategyError):
    """A revision whose ``strategy.toml`` does not make a plan; ``diagnostics`` holds every
    problem (the message repeats the errors)."""

    symbol = "INVALID_STRATEGY"

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        errors = [d for d in diagnostics if d.severity == "ERROR"]
        text = "; ".join(d.describe() for d in errors) or "invalid strategy"
        super().__init__(text, path=errors[0].path if errors else None)
        self.diagnostics = diagnostics


class ParameterOverrideError(StrategyError):
    """A parameter override refused: an unknown parameter, a value of the wrong type or out of
    the parameter's range; the message names the parameter and its range."""

    symbol = "INVALID_PARAMETER"
