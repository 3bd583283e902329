"""Documents for a terminal: a page's rows as an aligned table or as CSV, any other document
as its fields one a line. Values print as served (decimal strings stay strings); a nested value
prints as compact JSON."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

__all__ = ["csv_text", "rows_of", "table_text"]

#: A table cell longer than this is cut (the whole value is in ``--json`` and ``--csv``).
CELL = 40


def rows_of(document: Any) -> list[dict[str, Any]] | None:
    """The rows of a page (a document with a ``next_cursor``: its first list, ``items``,
    ``bars`` ...), None for a document that is not a page."""
    if not isinstance(document, dict) or "next_cursor" not in document:
        return None
    for value in document.values():
        if isinstance(value, list) and all(isinstance(v, dict) for v in value):
            return value
    return None


def _cell(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def _columns(rows: list[dict[str, Any]]) -> list[str]:
    """Every key of the rows, identifiers first (documents list their keys sorted)."""
    tags = ("version", "schema_id", "schema_version")
    keys = dict.fromkeys(key for row in rows for key in row if key not in tags)
    return sorted(keys, key=lambda key: not key.endswith("_id"))


def table_text(document: Any) -> str:
    rows = rows_of(document)
    if rows is None:
        fields = {k: v for k, v in (document or {}).items() if k not in ("version", "schema_version")}
        width = max((len(k) for k in fields), default=0)
        return "".join(f"{key:<{width}}  {_cell(value)}\n" for key, value in fields.items())
    if not rows:
        return "(no rows)\n"
    columns = _columns(rows)
    cells = [[_cell(row.get(c)) for c in columns] for row in rows]
    cells = [[c if len(c) <= CELL else c[: CELL - 1] + "…" for c in line] for line in cells]
    widths = [max(len(columns[i]), *(len(line[i]) for line in cells)) for i in range(len(columns))]
    lines = [columns, *cells]
    out = "".join("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() + "\n" for line in lines)
    if isinstance(document, dict) and document.get("next_cursor"):
        out += f"(more: --cursor {document['next_cursor']})\n"
    return out


def csv_text(document: Any) -> str:
    """A page's rows as CSV, every column and every value whole; a document without rows is
    one row of its fields."""
    rows = rows_of(document)
    if rows is None:
        rows = [document] if isinstance(document, dict) else []
    out = io.StringIO()
    columns = _columns(rows)
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_cell(row.get(c)) for c in columns])
    return out.getvalue()
