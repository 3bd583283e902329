"""One validation problem (a row of svc.validation_receipt's ``diagnostics``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Diagnostic", "Severity"]

Severity = Literal["ERROR", "WARNING"]


@dataclass(frozen=True)
class Diagnostic:
    """A problem in one file: its line (1-based) when one can be pointed at, else None."""

    path: str
    line: int | None
    severity: Severity
    message: str

    def describe(self) -> str:
        """``path:line: message`` (``path: message`` without a line)."""
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        return f"{where}: {self.message}"

    def to_wire(self) -> dict[str, object]:
        """The receipt's row."""
        return {"path": self.path, "line": self.line, "severity": self.severity, "message": self.message}
