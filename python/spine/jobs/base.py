"""What the halves of the store share: the engine, its writer, and the two kinds of
transaction."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Engine, Table
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection
from sqlalchemy.sql.dml import Insert

from spine.jobs.database import WRITE, open_engine

__all__ = ["Connections"]


class Connections:
    """An engine for one database URL, and the transactions the store runs on it."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._engine: Engine = open_engine(url)
        # The same pool and events; SQLite begins its transactions IMMEDIATE.
        self._writer: Engine = self._engine.execution_options(**{WRITE: True})
        self._postgres = self._engine.dialect.name == "postgresql"

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        """A read-only transaction (rolled back at the end)."""
        with self._engine.connect() as connection:
            yield connection

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        """A write transaction, committed when the block ends without an exception. On SQLite
        it holds the database's write lock from its first statement; on PostgreSQL rows are
        locked where a method says ``with_for_update``."""
        with self._writer.begin() as connection:
            yield connection

    def _insert_ignore(self, table: Table) -> Insert:
        """``INSERT ... ON CONFLICT DO NOTHING`` in the engine's dialect."""
        if self._postgres:
            return postgresql.insert(table).on_conflict_do_nothing()
        return sqlite.insert(table).on_conflict_do_nothing()

    def close(self) -> None:
        """Close every pooled connection (the store is unusable after)."""
        self._engine.dispose()
