"""Strategies and their immutable revisions: the authoring half of the store.

A save is one transaction: lock the strategy's row (``SELECT ... FOR UPDATE`` on PostgreSQL;
SQLite's ``BEGIN IMMEDIATE`` locks the whole file), check the parent against the head, then
write the blobs, the revision and its files and move the head. Two saves on one head can
never both win: the second finds the head moved. Two first saves of one new strategy on
PostgreSQL have no row to lock; the loser's insert of the strategy row fails on its primary
key and is answered the same way, with the winner's head.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Row, Select, exc, func, insert, select, update
from sqlalchemy.engine import Connection

from spine.jobs.base import Connections
from spine.jobs.records import HeadMoved, NotFound, Revision, StoreError, Strategy
from spine.jobs.schema import blobs, revision_files, revisions, strategies

__all__ = ["RevisionStore", "StrategyFile"]


@dataclass(frozen=True, slots=True)
class StrategyFile:
    """One file of a revision, as ``file_text`` answers it."""

    strategy_id: str
    #: The revision it was read from (the head when none was named).
    revision_id: str
    path: str
    content: str
    content_hash: str


class RevisionStore(Connections):
    def save_revision(
        self,
        strategy_id: str,
        parent_revision_id: str | None,
        message: str,
        files: Sequence[tuple[str, str | bytes, str]],
        revision_id: str,
        instruments: Sequence[str],
        name: str,
        template_id: str | None,
        now_ns: int,
    ) -> Revision:
        """Save a revision whose ``files`` are ``(path, text, content_hash)``: the strategy's
        first when ``parent_revision_id`` is None, else on top of that parent, which must be
        the head. The caller computed the ids and hashes; the store keeps them as given.

        # Errors
        :class:`HeadMoved` when the parent is not the head (or is None while the strategy
        exists, or names one while it does not); ``ValueError`` for no files or a path given
        twice or a content hash that is not the SHA-256 of the
        file's UTF-8 bytes; :class:`StoreError` for a revision id the strategy already holds.
        """
        _check_files(files)
        with self._saving(strategy_id, parent_revision_id, revision_id) as connection:
            seq = _move_head(connection, strategy_id, parent_revision_id, revision_id, name, template_id, now_ns)
            connection.execute(
                self._insert_ignore(blobs),
                [{"content_hash": content_hash, "content": _bytes(content)} for _, content, content_hash in files],
            )
            connection.execute(
                insert(revisions).values(
                    strategy_id=strategy_id,
                    revision_id=revision_id,
                    parent_revision_id=parent_revision_id,
                    message=message,
                    instruments=json.dumps(list(instruments), separators=(",", ":")),
                    created_ts=now_ns,
                    seq=seq,
                )
            )
            connection.execute(
                insert(revision_files),
                [
                    {"strategy_id": strategy_id, "revision_id": revision_id, "path": path, "content_hash": content_hash}
                    for path, _, content_hash in files
                ],
            )
        return self.revision(strategy_id, revision_id)

    @contextmanager
    def _saving(self, strategy_id: str, parent_revision_id: str | None, revision_id: str) -> Iterator[Connection]:
        """The save's transaction; a save refused by the database on a key is answered with the
        head when the head moved (a concurrent first save), else as a :class:`StoreError`."""
        try:
            with self._write() as connection:
                yield connection
        except exc.IntegrityError as error:
            with self._read() as connection:
                head = _head(connection, strategy_id)
                if head != parent_revision_id:
                    raise HeadMoved(head, _files(connection, strategy_id, head)) from None
            raise StoreError(
                f"{StoreError.symbol}: revision {revision_id} of {strategy_id} not saved: {error.orig}"
            ) from error

    def strategy(self, strategy_id: str) -> Strategy:
        """# Errors
        :class:`NotFound` when there is no such strategy."""
        with self._read() as connection:
            row = connection.execute(_with_counts().where(strategies.c.strategy_id == strategy_id)).first()
        if row is None:
            raise NotFound(f"{NotFound.symbol}: no strategy {strategy_id}")
        return _strategy(row)

    def strategies(self, offset: int = 0, limit: int = 100) -> list[Strategy]:
        """Strategies by id (a stable order for paging)."""
        with self._read() as connection:
            rows = connection.execute(
                _with_counts().order_by(strategies.c.strategy_id).offset(offset).limit(limit)
            ).all()
        return [_strategy(row) for row in rows]

    def revisions(self, strategy_id: str, offset: int = 0, limit: int = 100) -> list[Revision]:
        """A strategy's revisions, newest first.

        # Errors
        :class:`NotFound` when there is no such strategy."""
        with self._read() as connection:
            if _head(connection, strategy_id) is None:
                raise NotFound(f"{NotFound.symbol}: no strategy {strategy_id}")
            rows = connection.execute(
                select(revisions)
                .where(revisions.c.strategy_id == strategy_id)
                .order_by(revisions.c.seq.desc())
                .offset(offset)
                .limit(limit)
            ).all()
            files = _files_of(connection, strategy_id, [row.revision_id for row in rows])
        return [_revision(row, files.get(row.revision_id, {})) for row in rows]

    def revision(self, strategy_id: str, revision_id: str) -> Revision:
        """# Errors
        :class:`NotFound` when the strategy holds no such revision."""
        with self._read() as connection:
            row = connection.execute(
                select(revisions).where(revisions.c.strategy_id == strategy_id, revisions.c.revision_id == revision_id)
            ).first()
            if row is None:
                raise NotFound(f"{NotFound.symbol}: strategy {strategy_id} has no revision {revision_id}")
            return _revision(row, _files(connection, strategy_id, revision_id))

    def revision_files(self, strategy_id: str, revision_id: str) -> dict[str, str]:
        """A revision's files, path -> content hash, by path.

        # Errors
        :class:`NotFound` when the strategy holds no such revision."""
        return dict(self.revision(strategy_id, revision_id).files)

    def revision_texts(self, strategy_id: str, revision_id: str) -> dict[str, str]:
        """A revision's files, path -> exact text, by path.

        # Errors
        :class:`NotFound` when the strategy holds no such revision."""
        with self._read() as connection:
            rows = connection.execute(
                select(revision_files.c.path, blobs.c.content)
                .join(blobs, blobs.c.content_hash == revision_files.c.content_hash)
                .where(revision_files.c.strategy_id == strategy_id, revision_files.c.revision_id == revision_id)
                .order_by(revision_files.c.path)
            ).all()
        if not rows:
            raise NotFound(f"{NotFound.symbol}: strategy {strategy_id} has no revision {revision_id}")
        return {row.path: bytes(row.content).decode() for row in rows}

    def file_text(self, strategy_id: str, revision_id: str | None, path: str) -> StrategyFile:
        """A file of a revision (None: the head), with its exact text.

        # Errors
        :class:`NotFound` for no such strategy, revision or path."""
        with self._read() as connection:
            revision_id = revision_id or _head(connection, strategy_id)
            if revision_id is None:
                raise NotFound(f"{NotFound.symbol}: no strategy {strategy_id}")
            row = connection.execute(
                select(revision_files.c.content_hash, blobs.c.content)
                .join(blobs, blobs.c.content_hash == revision_files.c.content_hash)
                .where(
                    revision_files.c.strategy_id == strategy_id,
                    revision_files.c.revision_id == revision_id,
                    revision_files.c.path == path,
                )
            ).first()
        if row is None:
            raise NotFound(f"{NotFound.symbol}: strategy {strategy_id} revision {revision_id} has no file {path}")
        return StrategyFile(strategy_id, revision_id, path, bytes(row.content).decode(), str(row.content_hash))


def _bytes(content: str | bytes) -> bytes:
    return content.encode() if isinstance(content, str) else content


def _head(connection: Connection, strategy_id: str) -> str | None:
    head = connection.execute(
        select(strategies.c.head_revision_id).where(strategies.c.strategy_id == strategy_id)
    ).scalar_one_or_none()
    return None if head is None else str(head)


def _files(connection: Connection, strategy_id: str, revision_id: str | None) -> dict[str, str]:
    if revision_id is None:
        return {}
    return _files_of(connection, strategy_id, [revision_id]).get(revision_id, {})


def _files_of(connection: Connection, strategy_id: str, revision_ids: list[str]) -> dict[str, dict[str, str]]:
    """revision id -> (path -> content hash, by path), for each revision named."""
    out: dict[str, dict[str, str]] = {}
    if not revision_ids:
        return out
    rows = connection.execute(
        select(revision_files)
        .where(revision_files.c.strategy_id == strategy_id, revision_files.c.revision_id.in_(revision_ids))
        .order_by(revision_files.c.revision_id, revision_files.c.path)
    )
    for row in rows:
        out.setdefault(row.revision_id, {})[row.path] = row.content_hash
    return out


def _with_counts() -> Select[Any]:
    """Strategies with their revision counts."""
    counts = (
        select(revisions.c.strategy_id, func.count().label("revisions")).group_by(revisions.c.strategy_id).subquery()
    )
    return select(strategies, counts.c.revisions).join(counts, counts.c.strategy_id == strategies.c.strategy_id)


def _strategy(row: Row[tuple[object, ...]]) -> Strategy:
    return Strategy(
        row.strategy_id, row.name, row.template_id, row.head_revision_id, row.created_ts, row.updated_ts, row.revisions
    )


def _revision(row: Row[tuple[object, ...]], files: dict[str, str]) -> Revision:
    return Revision(
        row.strategy_id,
        row.revision_id,
        row.parent_revision_id,
        row.message,
        tuple(files.items()),
        tuple(json.loads(row.instruments)),
        row.created_ts,
    )


def _check_files(files: Sequence[tuple[str, str | bytes, str]]) -> None:
    """Refuse no files, a path given twice, or a content hash that is not its file's SHA-256."""
    paths = [path for path, _, _ in files]
    if not paths:
        raise ValueError("a revision holds at least one file")
    if len(set(paths)) != len(paths):
        raise ValueError(f"a revision names each path once; given {sorted(paths)}")
    for path, content, content_hash in files:
        if hashlib.sha256(_bytes(content)).hexdigest() != content_hash:
            raise ValueError(f"{path}: content_hash {content_hash} is not the SHA-256 of its UTF-8 bytes")


def _move_head(
    connection: Connection,
    strategy_id: str,
    parent_revision_id: str | None,
    revision_id: str,
    name: str,
    template_id: str | None,
    now_ns: int,
) -> int:
    """Lock the strategy's row, check ``parent_revision_id`` is its head, and make
    ``revision_id`` the head (creating the strategy on its first save); the revision's ``seq``.

    # Errors
    :class:`HeadMoved` when the parent is not the head."""
    locked = connection.execute(
        select(strategies.c.head_revision_id).where(strategies.c.strategy_id == strategy_id).with_for_update()
    ).first()
    head = None if locked is None else str(locked.head_revision_id)
    if head != parent_revision_id:
        raise HeadMoved(head, _files(connection, strategy_id, head))
    moved = {"name": name, "template_id": template_id, "head_revision_id": revision_id, "updated_ts": now_ns}
    if locked is None:
        connection.execute(insert(strategies).values(strategy_id=strategy_id, created_ts=now_ns, **moved))
        return 1
    connection.execute(update(strategies).where(strategies.c.strategy_id == strategy_id).values(**moved))
    newest: int = connection.execute(
        select(func.max(revisions.c.seq)).where(revisions.c.strategy_id == strategy_id)
    ).scalar_one()
    return newest + 1
