"""The schema sets' routes, on every process: the paged index (``/v2/schemas``, with both
digests) and each file's exact bytes (``/v2/schemas/{file}``; v1's ``/schemas``).

File names are unique across the sets (the loader refuses a schema id in both), so a file is
served by its name alone: ``/v2/schemas/svc.health.json`` serves ``schemas/own/svc.health.json``.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from spine._core import WIRE_VERSION
from spine.http.errors import HttpError
from spine.http.request import Query

__all__ = ["SchemaHandlers", "schema_entries", "schema_file"]


class SchemaHandlers:
    """``GET /v2/schemas`` and ``GET /v2/schemas/{file}``."""

    def schemas_list(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        from spine.schemas import own_schema_set, schema_set

        entries, cursor = query.page("/v2/schemas", schema_entries(own=True))  # a list route: paged like every other
        return {
            "version": WIRE_VERSION,
            "schema_id": "svc.schema_index",
            "schema_version": 1,
            "digest": "sha256:" + schema_set().digest,
            "own_digest": "sha256:" + own_schema_set().digest,
            "schemas": entries,
            "next_cursor": cursor,
        }

    def schemas_get(self, query: Query, params: dict[str, str]) -> bytes:
        return schema_file(params["file"])


def schema_entries(*, own: bool = False) -> list[dict[str, Any]]:
    """The spec's set by name, in file-name order (with ``own``, then the own set's): each
    schema's constants, set, file and v2 path."""
    from spine.schemas import own_schema_set, schema_set

    sets = [("spec", schema_set())] + ([("own", own_schema_set())] if own else [])
    return [
        {"schema_id": sid, "schema_version": ver, "set": name, "file": f"{sid}.json", "path": f"/v2/schemas/{sid}.json"}
        for name, loaded in sets
        for (sid, ver), _ in sorted(loaded.schemas.items())
    ]


def schema_file(name: str, *, v1: bool = False) -> bytes:
    """A schema file's bytes as shipped: one of either set, or with ``v1`` also one of the v1
    documents (served by the v1 route only)."""
    path = _schema_files().get(name)
    if path is not None and not v1 and path.parent.name == "v1":
        path = None
    if path is None:
        shown = name if len(name) <= 128 else name[:128] + "..."
        index = "/schemas" if v1 else "/v2/schemas"  # the index of the route that was asked
        raise HttpError("NOT_FOUND", f"no schema file {shown!r}; see {index}")
    return path.read_bytes()


@functools.cache
def _schema_files() -> dict[str, Path]:
    """The shipped schema files by name (a request names one of these, never a path): the
    spec set, the own set and the v1 documents (``v1.*.json``)."""
    from spine.schemas import OWN_SCHEMA_DIR, SCHEMA_DIR

    files = [*SCHEMA_DIR.glob("*.json"), *OWN_SCHEMA_DIR.glob("*.json"), *(SCHEMA_DIR / "v1").glob("v1.*.json")]
    return {path.name: path for path in files}
