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
import re
import time
from collections.abc import Callable
from typing import Any

import msgspec

from spine.gateway.pages import db_page, page_document
from spine.http.app import Relayed
from spine.http.errors import HttpError
from spine.http.request import Query
from spine.jobs.records import HeadMoved, NotFound
from spine.jobs.store import Store
from spine.schemas import validator_for
from spine.strategies import conditions, document, paths, revisions, templates
from spine.strategies.errors import StrategyFileError
from spine.wire.head import head

__all__ = ["StrategyHandlers", "revision_document", "save_files"]

_encode = msgspec.json.Encoder().encode
_ID = "^[a-z][a-z0-9_]{0,63}$"
STRATEGY_ID = re.compile(r"[a-z][a-z0-9_]{0,63}")
IDENTITY = re.compile(r"[0-9a-f]{64}")
_SAVE = ("svc.strategy_revision_save_request", 2)


class StrategyHandlers:
    """``known_instrument(id)``: True or False when some node answers for the id's venue, None
    when none can say (validation then warns instead of refusing)."""

    def __init__(self, store: Store, known_instrument: Callable[[str], bool | None]) -> None:
        self.store = store
        self.known_instrument = known_instrument

    # registries and templates: fixed by this build

    def authoring_registry(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        return conditions.authoring_registry()

    def conditions_registry(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        return conditions.condition_registry()

    def strategy_templates_list(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        items, cursor = query.page("/v2/strategy-templates", templates.template_documents())
        return page_document("svc.template_page", items, cursor)

    def strategy_templates_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        try:
            return templates.template_document(params["id"])
        except KeyError:
            raise HttpError(
                "NOT_FOUND", f"no strategy template {params['id']!r}; templates: {', '.join(templates.TEMPLATE_IDS)}"
            ) from None

    # projects and revisions

    async def strategies_list(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        rows, cursor = await db_page(query, "/v2/strategies", self.store.strategies)
        return page_document("svc.strategy_page", [_summary(row) for row in rows], cursor)

    async def strategies_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        row = await self._strategy(params["id"])
        files = await asyncio.to_thread(self.store.revision_texts, row.strategy_id, row.head_revision_id)
        return revisions.project_document(
            strategy_id=row.strategy_id,
            name=row.name,
            template_id=row.template_id,
            head_revision_id=row.head_revision_id,
            files=files,
            created_ts=row.created_ts,
            updated_ts=row.updated_ts,
        )

    async def strategies_revisions(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        row = await self._strategy(params["id"])
        rows, cursor = await db_page(
            query,
            f"/v2/strategies/{row.strategy_id}/revisions",
            lambda offset, limit: self.store.revisions(row.strategy_id, offset, limit),
        )
        return page_document("svc.revision_page", [revision_document(r) for r in rows], cursor)

    async def strategies_revision(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        row = await self._strategy(params["id"])
        return revision_document(await self._revision(row.strategy_id, params["revision"]))

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
        diagnostics = await asyncio.to_thread(document.validate, files, self._instrument_check())
        return revisions.validation_receipt(
            strategy_id=row.strategy_id, revision_id=revision_id, diagnostics=diagnostics, ts_event=time.time_ns()
        )

    async def strategies_create(self, query: Query, params: dict[str, str], body: bytes) -> Relayed:
        request = _save_request(body)
        files = _files(request["files"])
        return await asyncio.to_thread(
            save_files, self.store, request["strategy_id"], request["parent_revision_id"], request["message"], files
        )

    def _instrument_check(self) -> Callable[[str], bool] | None:
        """Validation's instrument check: an id no node lists is an error; one whose venue's
        node cannot be asked now is not checked (``document.validate`` then warns)."""
        return lambda iid: self.known_instrument(iid) is not False

    # lookups

    async def _strategy(self, strategy_id: str) -> Any:
        _check_id(strategy_id)
        try:
            return await asyncio.to_thread(self.store.strategy, strategy_id)
        except NotFound:
            raise HttpError("NOT_FOUND", f"no strategy {strategy_id!r}; GET /v2/strategies lists them") from None

    async def _revision(self, strategy_id: str, revision_id: str) -> Any:
        if not IDENTITY.fullmatch(revision_id):
            raise HttpError("INVALID_PARAMETER", f"revision {revision_id!r}: a revision id is 64 lowercase hex digits")
        try:
            return await asyncio.to_thread(self.store.revision, strategy_id, revision_id)
        except NotFound:
            raise HttpError(
                "NOT_FOUND",
                f"strategy {strategy_id!r} has no revision {revision_id}; "
                f"GET /v2/strategies/{strategy_id}/revisions lists them",
            ) from None

    async def _file(self, strategy_id: str, revision_id: str | None, path: str) -> dict[str, Any]:
        row = await self._strategy(strategy_id)
        try:
            path = paths.check_path(path)
        except StrategyFileError as error:
            raise HttpError("INVALID_PARAMETER", str(error)) from None
        if revision_id is not None:
            await self._revision(row.strategy_id, revision_id)
        try:
            found = await asyncio.to_thread(
                self.store.file_text, row.strategy_id, revision_id or row.head_revision_id, path
            )
        except NotFound:
            raise HttpError(
                "NOT_FOUND",
                f"strategy {strategy_id!r} has no file {path!r} in revision {revision_id or row.head_revision_id}",
            ) from None
        return revisions.file_document(
            strategy_id=row.strategy_id, revision_id=revision_id, path=path, content=found.content
        )


def save_files(store: Store, strategy_id: str, parent: str | None, message: str, files: dict[str, str]) -> Relayed:
    """Save ``files`` as a revision on ``parent``: 201 with the revision, or 409 with
    ``svc.strategy_mutation_conflict`` when ``parent`` is not the head (nothing written).
    Blocking: call it in a thread."""
    hashes = revisions.content_hashes(files)
    revision_id = revisions.revision_id(parent, files)
    header = document.header(files)
    try:
        revision = store.save_revision(
            strategy_id,
            parent,
            message,
            [(path, files[path], hashes[path]) for path in sorted(files)],
            revision_id,
            header.instruments,
            header.name or strategy_id,
            header.template_id,
            time.time_ns(),
        )
    except HeadMoved as moved:
        base = {} if parent is None else _hashes_or_empty(store, strategy_id, parent)
        conflict = revisions.conflict_document(
            strategy_id=strategy_id,
            expected_revision_id=parent,
            head_revision_id=moved.head_revision_id,
            paths=revisions.conflict_paths(base, moved.head_files, hashes),
        )
        return Relayed(409, _encode(conflict))
    return Relayed(201, _encode(revision_document(revision)))


def _hashes_or_empty(store: Store, strategy_id: str, revision_id: str) -> dict[str, str]:
    """A revision's files by path (their hashes); empty for a revision the project lacks."""
    try:
        return store.revision_files(strategy_id, revision_id)
    except NotFound:
        return {}


def _check_id(strategy_id: str) -> None:
    if not STRATEGY_ID.fullmatch(strategy_id):
        raise HttpError("INVALID_PARAMETER", f"strategy id {strategy_id!r}: allowed {_ID} (lowercase snake case)")


def _save_request(body: bytes) -> dict[str, Any]:
    """The body as a save request, checked against its schema (the stock validator), or 400
    naming the first failing JSON path and what the schema allows there."""
    request: dict[str, Any] = json.loads(body)  # the app has strict-parsed it: no floats, no duplicate keys
    errors = sorted(validator_for(*_SAVE).iter_errors(request), key=lambda e: list(e.absolute_path))
    if errors:
        error = errors[0]
        where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        raise HttpError("INVALID_BODY", f"POST /v2/strategies: at {where}: {_path_reason(error) or error.message}")
    return request


def _path_reason(error: Any) -> str | None:
    """The file-path rule a refused path breaks, said plainly (the schema's pattern is not)."""
    where = list(error.absolute_path)
    if len(where) == 3 and where[0] == "files" and where[2] == "path" and isinstance(error.instance, str):
        try:
            paths.check_path(error.instance)
        except StrategyFileError as refusal:
            return str(refusal)
    return None


def _files(listed: list[dict[str, str]]) -> dict[str, str]:
    """The save's files by path, checked; a path listed twice is refused (which copy the
    author meant is not ours to guess)."""
    files: dict[str, str] = {}
    for file in listed:
        if file["path"] in files:
            raise HttpError(
                "INVALID_BODY",
                f"POST /v2/strategies: the path {file['path']!r} is given more than once; each path once per save",
            )
        files[file["path"]] = file["content"]
    try:
        paths.check_files(files)
    except StrategyFileError as error:
        raise HttpError("INVALID_BODY", f"POST /v2/strategies: {error}") from None
    return files


def _summary(row: Any) -> dict[str, Any]:
    return revisions.summary_document(
        strategy_id=row.strategy_id,
        name=row.name,
        template_id=row.template_id,
        head_revision_id=row.head_revision_id,
        revisions=row.revisions,
        created_ts=row.created_ts,
        updated_ts=row.updated_ts,
    )


def revision_document(row: Any) -> dict[str, Any]:
    """svc.strategy_revision (version 2) of a stored revision: its files' hashes as stored."""
    return {
        **head("svc.strategy_revision", 2),
        "strategy_id": row.strategy_id,
        "revision_id": row.revision_id,
        "parent_revision_id": row.parent_revision_id,
        "message": row.message,
        "files": [{"path": path, "content_hash": digest} for path, digest in row.files],
        "instruments": row.instruments,
        "created_ts": str(row.created_ts),
    }
