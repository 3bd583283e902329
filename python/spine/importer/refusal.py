"""The one error of ``spine import``: a refusal that names the row (or the flag, column or
file) and the value, and says what is allowed. The command exits 2 on it, having written
nothing."""

from __future__ import annotations

from spine.errors import SpineError

__all__ = ["ImportRefused", "where"]


class ImportRefused(SpineError, ValueError):
    """An import refused before anything reached the catalog."""

    symbol = "IMPORT_REFUSED"


def where(row: int, csv: bool) -> str:
    """How a refusal names a 1-based data row: a CSV row also names its line (the header is
    line 1, so data row N is line N + 1 for files without quoted line breaks)."""
    return f"row {row} (line {row + 1})" if csv else f"row {row}"
