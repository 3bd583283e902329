"""Revisions and the strategy documents built from plain arguments.

A revision is immutable and named by ``identity("revision_id", {"parent_revision_id", "files":
[{"path", "content_hash"}...] sorted by path})``: the same files on the same parent are the
same revision, whatever order they were sent in. A save whose base is not the head conflicts
on the paths changed on both sides (base -> head and base -> save).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from spine import _core
from spine.strategies.diagnostics import Diagnostic
from spine.strategies.document import header
from spine.wire.head import head

__all__ = [
    "content_hash",
    "content_hashes",
    "revision_id",
    "changed_paths",
    "conflict_paths",
    "revision_instruments",
    "revision_document",
    "file_document",
    "project_document",
    "summary_document",
    "conflict_document",
    "validation_receipt",
]


def content_hash(text: str) -> str:
    """SHA-256 of the text's UTF-8 bytes, lowercase hex."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def content_hashes(files: Mapping[str, str]) -> dict[str, str]:
    """Path -> content hash, sorted by path."""
    return {path: content_hash(files[path]) for path in sorted(files)}


def revision_id(parent_revision_id: str | None, files: Mapping[str, str]) -> str:
    """The revision's identity over its parent and its files' paths and content hashes."""
    return _core.identity(
        "revision_id",
        {
            "parent_revision_id": parent_revision_id,
            "files": [{"path": path, "content_hash": digest} for path, digest in content_hashes(files).items()],
        },
    )


def changed_paths(a: Mapping[str, str], b: Mapping[str, str]) -> set[str]:
    """Paths added, removed or modified from ``a`` to ``b`` (path -> content hash)."""
    return {path for path in a.keys() | b.keys() if a.get(path) != b.get(path)}


def conflict_paths(
    base_files: Mapping[str, str], head_files: Mapping[str, str], saved_files: Mapping[str, str]
) -> list[str]:
    """The paths changed both from base to head and from base to the save, sorted (maps of
    path -> content hash)."""
    return sorted(changed_paths(base_files, head_files) & changed_paths(base_files, saved_files))


def revision_instruments(files: Mapping[str, str]) -> list[str]:
    """The instruments ``strategy.toml`` names (empty when it does not parse)."""
    return header(files).instruments


def revision_document(
    *, strategy_id: str, parent_revision_id: str | None, message: str, files: Mapping[str, str], created_ts: int
) -> dict[str, Any]:
    """svc.strategy_revision (version 2) of a save; its ``revision_id`` computed here."""
    return {
        **head("svc.strategy_revision", 2),
        "strategy_id": strategy_id,
        "revision_id": revision_id(parent_revision_id, files),
        "parent_revision_id": parent_revision_id,
        "message": message,
        "files": [{"path": path, "content_hash": digest} for path, digest in content_hashes(files).items()],
        "instruments": revision_instruments(files),
        "created_ts": str(created_ts),
    }


def file_document(*, strategy_id: str, revision_id: str | None, path: str, content: str) -> dict[str, Any]:
    """svc.strategy_file: one file's exact text (``revision_id`` None: read at the head)."""
    return {
        **head("svc.strategy_file", 1),
        "strategy_id": strategy_id,
        "revision_id": revision_id,
        "path": path,
        "content": content,
        "content_hash": content_hash(content),
    }


def project_document(
    *,
    strategy_id: str,
    name: str,
    template_id: str | None,
    head_revision_id: str | None,
    files: Mapping[str, str],
    created_ts: int,
    updated_ts: int,
) -> dict[str, Any]:
    """svc.strategy_project: the head and its files by path (bytes and hashes)."""
    listed = [
        {"path": path, "bytes": len(files[path].encode("utf-8")), "content_hash": content_hash(files[path])}
        for path in sorted(files)
    ]
    strategy = (strategy_id, name, template_id, head_revision_id)
    return _strategy("svc.strategy_project", *strategy, created_ts, updated_ts, files=listed)


def summary_document(
    *,
    strategy_id: str,
    name: str,
    template_id: str | None,
    head_revision_id: str | None,
    revisions: int,
    created_ts: int,
    updated_ts: int,
) -> dict[str, Any]:
    """svc.strategy_summary: one row of the strategy list."""
    strategy = (strategy_id, name, template_id, head_revision_id)
    return _strategy("svc.strategy_summary", *strategy, created_ts, updated_ts, revisions=revisions)


def _strategy(
    schema_id: str,
    strategy_id: str,
    name: str,
    template_id: str | None,
    head_revision_id: str | None,
    created_ts: int,
    updated_ts: int,
    **between: Any,
) -> dict[str, Any]:
    """A strategy's document of version 1: its names and head, the fields ``between``, then its times."""
    return {
        **head(schema_id, 1),
        "strategy_id": strategy_id,
        "name": name,
        "template_id": template_id,
        "head_revision_id": head_revision_id,
        **between,
        "created_ts": str(created_ts),
        "updated_ts": str(updated_ts),
    }


def conflict_document(
    *,
    strategy_id: str,
    expected_revision_id: str | None,
    head_revision_id: str | None,
    paths: Iterable[str],
    detail: str | None = None,
) -> dict[str, Any]:
    """svc.strategy_mutation_conflict: the base the writer sent, the head now and the paths
    changed on both sides (sorted, distinct)."""
    listed = sorted(set(paths))
    if detail is None:
        detail = (
            f"REVISION_CONFLICT: the save's base {expected_revision_id} is not the head {head_revision_id}; "
            + (f"changed on both sides: {', '.join(listed)}" if listed else "no path changed on both sides")
            + "; rebase on the head and save again"
        )
    return {
        **head("svc.strategy_mutation_conflict", 1),
        "strategy_id": strategy_id,
        "expected_revision_id": expected_revision_id,
        "head_revision_id": head_revision_id,
        "paths": listed,
        "detail": detail,
    }


def validation_receipt(
    *, strategy_id: str, revision_id: str | None, diagnostics: Sequence[Diagnostic], ts_event: int
) -> dict[str, Any]:
    """svc.validation_receipt (version 2): valid exactly when no diagnostic is an ERROR."""
    return {
        **head("svc.validation_receipt", 2),
        "strategy_id": strategy_id,
        "revision_id": revision_id,
        "valid": not any(d.severity == "ERROR" for d in diagnostics),
        "diagnostics": [d.to_wire() for d in diagnostics],
        "ts_event": str(ts_event),
    }
