"""``Store``: strategies, revisions, backtest jobs, parameter studies and the workers'
liveness in one database, SQLite (the default: one file under the data directory) or
PostgreSQL. Synchronous: the HTTP layer calls it in a
thread; each process opens one and shares it between its threads (every method runs its own
transaction on a pooled connection and keeps no state between calls)."""

from __future__ import annotations

from types import TracebackType

from sqlalchemy import insert, select, text

from spine.jobs.database import safe_url
from spine.jobs.queue import JobStore
from spine.jobs.records import StoreError
from spine.jobs.revision_store import RevisionStore
from spine.jobs.schema import SCHEMA_VERSION, meta, metadata
from spine.jobs.study_rows import StudyRows
from spine.jobs.workers import WorkerStore

__all__ = ["Store"]

#: The PostgreSQL advisory lock that serialises creating the tables (any fixed number).
_CREATE_LOCK = 0x5350494E45


class Store(RevisionStore, JobStore, WorkerStore, StudyRows):
    """The store at ``url`` (``sqlite:///path`` or ``postgresql+psycopg://...``); its tables
    are created on first open.

    # Errors
    :class:`StoreError` when the database holds another schema version;
    ``sqlalchemy.exc.OperationalError`` when the database cannot be reached.
    """

    def __init__(self, url: str) -> None:
        super().__init__(url)
        try:
            self._create()
        except BaseException:
            self.close()
            raise

    def _create(self) -> None:
        # One transaction, serialised across processes (BEGIN IMMEDIATE; an advisory lock on
        # PostgreSQL), so workers starting together on a new database never race the DDL.
        with self._write() as connection:
            if self._postgres:
                connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _CREATE_LOCK})
            metadata.create_all(connection)
            version = connection.execute(select(meta.c.value).where(meta.c.key == "schema_version")).scalar()
            if version is None:
                connection.execute(
                    insert(meta), [{"key": "schema_version", "value": SCHEMA_VERSION}, {"key": "job_seq", "value": 0}]
                )
            elif version != SCHEMA_VERSION:
                raise StoreError(
                    f"{StoreError.symbol}: {safe_url(self.url)} holds schema version {version}; "
                    f"this spine reads version {SCHEMA_VERSION}"
                )

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()
