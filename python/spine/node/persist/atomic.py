"""Small versioned state files: replaced whole (written to a temporary name beside the target,
fsynced, then renamed over it, so a crash leaves the previous file or the new one, never half
of one) and read back only at the version that wrote them."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["read_json", "write_json"]


def write_json(path: Path, document: Any) -> None:
    """Replace ``path`` with ``document`` as compact JSON (atomically)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(path.suffix + ".tmp")
    with temporary.open("w") as handle:
        json.dump(document, handle, separators=(",", ":"))
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def read_json(path: Path, version: int) -> dict[str, Any] | None:
    """The document at ``path`` (None when there is none). Raises ``OSError`` or
    ``ValueError`` (also for another ``version``): the caller says what an unreadable file
    costs."""
    if not path.exists():
        return None
    document = json.loads(path.read_text())
    if not isinstance(document, dict) or document.get("version") != version:
        found = document.get("version") if isinstance(document, dict) else None
        raise ValueError(f"version {found!r}, expected {version}")
    return document
