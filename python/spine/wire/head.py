"""The head every v2 document opens with: ``version``, ``schema_id`` and ``schema_version``, in
that order, written in one place for every producer."""

from __future__ import annotations

from typing import Any

from spine._core import WIRE_VERSION

__all__ = ["head"]


def head(schema_id: str, schema_version: int = 1) -> dict[str, Any]:
    """The head of a v2 document ``schema_id`` at ``schema_version``."""
    return {"version": WIRE_VERSION, "schema_id": schema_id, "schema_version": schema_version}
