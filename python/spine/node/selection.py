"""The ingestion roster: ``GET /v2/selection`` (one row per instrument the venue lists) and the
operator's changes to it, ``POST /v2/selection`` (add) and ``POST /v2/selection/remove``.

A row joins two states on purpose: ``selected``, ``retention_state``, ``channels`` and
``second_tier`` are the running node's (its actor subscribes its roster once, at start), while
``manifest`` is the manifest file as it is on disk now. A change rewrites the file and answers
the rows it touched, so a change waiting for the next start shows as ``manifest`` differing
from ``selected``. The deployment-mode gate (403) is the app's, for every served COMMAND.
"""

from __future__ import annotations

from typing import Any

from spine.http.bodies import SelectionBody
from spine.http.errors import HttpError
from spine.http.request import Query
from spine.manifest import load_manifest, write_manifest
from spine.node.view import NodeView
from spine.wire.head import head

__all__ = ["SelectionHandlers"]


class SelectionHandlers:
    """The selection routes over one :class:`~spine.node.view.NodeView`."""

    def __init__(self, node: NodeView) -> None:
        self.node = node

    def selection_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        listed = [doc["instrument_id"] for doc in self.node.instrument_docs()]
        ids, cursor = query.page("/v2/selection", listed)
        return {**head("svc.selection_page"), "items": self._rows(ids), "next_cursor": cursor}

    def selection_set(self, query: Query, params: dict[str, str], body: SelectionBody) -> dict[str, Any]:
        return self._change("POST /v2/selection", body, add=True)

    def selection_remove(self, query: Query, params: dict[str, str], body: SelectionBody) -> dict[str, Any]:
        return self._change("POST /v2/selection/remove", body, add=False)

    def _change(self, route: str, body: SelectionBody, *, add: bool) -> dict[str, Any]:
        requested = sorted(set(body.instrument_ids))
        listed = {doc["instrument_id"] for doc in self.node.instrument_docs()}
        missing = [iid for iid in requested if iid not in listed]
        if missing:
            more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
            raise HttpError(
                "NOT_FOUND", f"{route}: the venue does not list {', '.join(missing[:10])}{more}; see GET /v2/selection"
            )
        path = self.node.manifest_path
        if path is None:
            raise HttpError(
                "CONFLICT",
                f"{route}: this node is unmanaged (no manifest is configured), so every "
                "instrument is already selected; configure a manifest (the manifest key "
                "or SPINE_MANIFEST) to manage the roster",
            )
        current = self._on_disk() or frozenset()
        changed = current.union(requested) if add else current.difference(requested)
        if changed != current:  # a no-op change leaves the file (and its mtime) alone
            write_manifest(path, changed)
        return {**head("svc.selection_page"), "items": self._rows(requested), "next_cursor": None}

    def _on_disk(self) -> frozenset[str] | None:
        """The manifest file now; a configured file that is gone lists nothing (a change
        writes it again)."""
        try:
            return load_manifest(self.node.manifest_path)
        except FileNotFoundError:
            return frozenset()

    def _rows(self, ids: list[str]) -> list[dict[str, Any]]:
        on_disk = self._on_disk()
        ingested = set(self.node.ingested())
        rows = []
        for iid in ids:
            selected = iid in ingested
            channels = self.node.eligible_channels(iid) if selected else []
            rows.append(
                {
                    **head("svc.selection_row"),
                    "instrument_id": iid,
                    "selected": selected,
                    "retention_state": self.node.retention_state(iid),
                    "manifest": None if on_disk is None else iid in on_disk,
                    "channels": channels,
                    "second_tier": "bars_second" in channels,
                }
            )
        return rows
