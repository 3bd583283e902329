"""Small state files replaced whole: written to a temporary name beside the target, fsynced,
then renamed over it, so a crash leaves the previous file or the new one, never half of one."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["write_json"]


def write_json(path: Path, document: Any) -> None:
    """Replace ``path`` with ``document`` as compact JSON (atomically)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(path.suffix + ".tmp")
    with temporary.open("w") as handle:
        json.dump(document, handle, separators=(",", ":"))
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
