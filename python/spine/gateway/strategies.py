"""The strategy routes the gateway answers from its database: projects, their immutable
revisions and files, templates, the condition and authoring registries, and validation.

A save (``POST /v2/strategies``, a ``svc.strategy_revision_save_request``) names the revision
it was edited from; the store checks it against the head and inserts in one transaction, so of
two saves on one head exactly one wins and the other is 409 with a
``svc.strategy_mutation_conflict`` naming the head and the paths both sides changed. Nothing is
ever overwritten."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

import msgspec

from spine.gateway.pages import db_page, page_document
from spine.http.app import Relayed
from spine.http.errors import HttpError
from spine.http.request import Query
from spine.jobs.store import HeadMoved, Store
from spine.schemas import validator_for
from spine.strategies import conditions, document, paths, revisions, templates

__all__ = ["StrategyHandlers"]

_encode = msgspec.json.Encoder().encode
_ID = "^[a-z][a-z0-9_]{0,63}$"
_SAVE = ("svc.strategy_revision_save_request", 2)


class StrategyHandlers:
    """``known_instrument(id)``: True or False when some node answers for the id's venue, None
    when none can say (validation then warns instead of refusing)."""

    def __init__(self, store: Store, known_instrument: Callable[[str], bool | None]) -> None:
        self.store = store
        self.known_instrument = known_instrument

    # --- registries and templates: fixed by this build --------------------------------------

    def authoring_registry_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        return conditions.authoring_registry()

    def conditions_registry_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        return conditions.condition_registry()

    def strategy_templates_list(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        items, cursor = query.page("/v2/strategy-templates", templates.all_templates())
        return page_document("svc.template_page", items, cursor)

    def strategy_templates_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        found = templates.template(params["id"])
        if found is None:
            known = ", ".join(t["template_id"] for t in templates.all_templates())
            raise HttpError("NOT_FOUND", f"no strategy template {params['id']!r}; templates: {known}")
        return found

    # --- projects and revisions --------------------------------------------------------------

    async def strategies_list(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        rows, cursor = await db_page(query, "/v2/strategies", self.store.strategies)
        return page_document("svc.strategy_page", [revisions.summary_document(row) for row in rows], cursor)

    async def strategies_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        row = await self._strategy(params["id"])
        files = await asyncio.to_thread(self.store.revision_files, row.strategy_id, row.head_revision_id) \
            if row.head_revision_id is not None else []
        return revisions.project_document(row, files)

    async def strategies_revisions(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        row = await self._strategy(params["id"])
        rows, cursor = await db_page(query, f"/v2/strategies/{row.strategy_id}/revisions",
                                     lambda offset, limit: self.store.revisions(row.strategy_id, offset, limit))
        return page_document("svc.revision_page", [revisions.revision_document(r) for r in rows], cursor)

    async def strategies_revision(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        row = await self._strategy(params["id"])
        revision = await self._revision(row.strategy_id, params["revision"])
        return revisions.revision_document(revision)

    async def strategies_file(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        return await self._file(params["id"], None, params["path"])

    async def strategies_revision_file(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        return await self._file(params["id"], params["revision"], params["path"])

    async def strategies_validate(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        row = await self._strategy(params["id"])
        revision_id = query.text("revision_id") or row.head_revision_id
        files: dict[str, str] = {}
        if revision_id is not None:
            await self._revision(row.strategy_id, revision_id)
            files = await asyncio.to_thread(self.store.revision_texts, row.strategy_id, revision_id)
        diagnostics = document.validate(files, self.known_instrument)
        return revisions.validation_document(row.strategy_id, revision_id, diagnostics, time.time_ns())

    async def strategies_create(self, query: Query, params: dict[str, str], body: bytes) -> Relayed:
        request = _save_request(body)
        strategy_id = request["strategy_id"]
        files = {f["path"]: f["content"] for f in request["files"]}
        _check_files(files)
        hashes = {path: revisions.content_hash(text) for path, text in files.items()}
        parent = request["parent_revision_id"]
        revision_id = revisions.revision_id(parent, hashes)
        header = document.header(files)
        now = time.time_ns()
        try:
            revision = await asyncio.to_thread(
                self.store.save_revision, strategy_id, parent, request["message"],
                [(path, files[path], hashes[path]) for path in sorted(files)], revision_id, header.instruments,
                header.name or strategy_id, header.template_id, now)
        except HeadMoved as moved:
            base = {} if parent is None else await asyncio.to_thread(self._hashes_or_empty, strategy_id, parent)
            conflict = revisions.conflict_document(strategy_id, parent, moved.head_revision_id,
                                                   revisions.conflict_paths(base, moved.head_files, hashes))
            return Relayed(409, _encode(conflict))
        return Relayed(201, _encode(revisions.revision_document(revision)))

    # --- lookups -----------------------------------------------------------------------------

    def _hashes_or_empty(self, strategy_id: str, revision_id: str) -> dict[str, str]:
        """A revision's files by path (their hashes); empty for a revision the project lacks."""
        return {f.path: f.content_hash for f in self.store.revision_files(strategy_id, revision_id)}

    async def _strategy(self, strategy_id: str) -> Any:
        _check_id(strategy_id)
        row = await asyncio.to_thread(self.store.strategy, strategy_id)
        if row is None:
            raise HttpError("NOT_FOUND", f"no strategy {strategy_id!r}; GET /v2/strategies lists them")
        return row

    async def _revision(self, strategy_id: str, revision_id: str) -> Any:
        if not revisions.IDENTITY.match(revision_id):
            raise HttpError("INVALID_PARAMETER", f"revision {revision_id!r}: a revision id is 64 lowercase hex "
                                                 "digits")
        revision = await asyncio.to_thread(self.store.revision, strategy_id, revision_id)
        if revision is None:
            raise HttpError("NOT_FOUND", f"strategy {strategy_id!r} has no revision {revision_id}; "
                                         f"GET /v2/strategies/{strategy_id}/revisions lists them")
        return revision

    async def _file(self, strategy_id: str, revision_id: str | None, path: str) -> dict[str, Any]:
        row = await self._strategy(strategy_id)
        try:
            path = paths.check_path(path)
        except paths.PathRefused as error:
            raise HttpError("INVALID_PARAMETER", str(error)) from None
        if revision_id is not None:
            await self._revision(row.strategy_id, revision_id)
        elif row.head_revision_id is None:
            raise HttpError("NOT_FOUND", f"strategy {strategy_id!r} has no revision yet, so no files")
        text = await asyncio.to_thread(self.store.file_text, row.strategy_id,
                                       revision_id or row.head_revision_id, path)
        if text is None:
            raise HttpError("NOT_FOUND", f"strategy {strategy_id!r} has no file {path!r} in revision "
                                         f"{revision_id or row.head_revision_id}")
        return revisions.file_document(row.strategy_id, revision_id, path, text)


def _check_id(strategy_id: str) -> None:
    if not revisions.STRATEGY_ID.match(strategy_id):
        raise HttpError("INVALID_PARAMETER", f"strategy id {strategy_id!r}: allowed {_ID} (lowercase snake case)")


def _save_request(body: bytes) -> dict[str, Any]:
    """The body as a save request, checked against its schema (the stock validator), or 400
    naming the first failing JSON path and what the schema allows there."""
    request = json.loads(body)  # the app has strict-parsed it: no floats, no duplicate keys
    errors = sorted(validator_for(*_SAVE).iter_errors(request), key=lambda e: list(e.absolute_path))
    if errors:
        error = errors[0]
        where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        raise HttpError("INVALID_BODY", f"POST /v2/strategies: at {where}: {error.message}")
    return request


def _check_files(files: dict[str, str]) -> None:
    try:
        paths.check_files(files)
    except paths.PathRefused as error:
        raise HttpError("INVALID_BODY", f"POST /v2/strategies: {error}") from None
