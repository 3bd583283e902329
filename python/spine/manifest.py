"""The retained-ingestion manifest file: one instrument id per line, ``#`` starts a comment line.

The node reads it once, at start (its roster is subscribed then). ``POST /v2/selection``
rewrites it with :func:`write_manifest`: the ids sorted under a fixed header comment, written
to a temporary file beside it and renamed over it, so a reader (or a node starting right then)
sees the old file or the new one, never half of one.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

__all__ = ["HEADER", "load_manifest", "write_manifest"]

HEADER = (
    "# Spine retained-ingestion manifest: one instrument id per line.\n"
    "# Rewritten by POST /v2/selection and /v2/selection/remove; the node applies it at its next start.\n"
)


def load_manifest(path: str | None) -> frozenset[str] | None:
    """The retained-ingestion manifest: one instrument id per line (``#`` comments); ``None``
    when no manifest is configured (every instrument is then ``unmanaged``)."""
    if path is None:
        return None
    lines = Path(path).read_text().splitlines()
    return frozenset(line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#"))


def write_manifest(path: str, instrument_ids: Iterable[str]) -> None:
    """Replace the manifest at ``path`` with ``instrument_ids`` (sorted, one per line) under
    :data:`HEADER`, atomically; the file keeps its permissions. Comments other than the
    header are not carried over (the ids are re-sorted, so there is no place to keep them).

    # Errors
    ``OSError`` when the directory cannot be written; the old file is then left unchanged.
    """
    target = Path(path)
    text = HEADER + "".join(f"{iid}\n" for iid in sorted(set(instrument_ids)))
    mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else 0o644
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
