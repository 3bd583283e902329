"""One SQLAlchemy engine per process, for SQLite (the default: one file under the data
directory) or PostgreSQL (``postgresql+psycopg://...``).

SQLite is opened in WAL mode with a busy timeout, foreign keys on and ``synchronous=NORMAL``
(WAL keeps the file consistent on a crash; a power cut may lose the last commits). Python's
sqlite3 module would open its own deferred transactions, so it is told not to, and every
transaction is begun here: ``BEGIN IMMEDIATE`` on the writer (the write lock is taken up
front, so a check and the write it guards are one step for every process) and ``BEGIN`` on
the reader.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import Connection, make_url

__all__ = ["BUSY_TIMEOUT_SECS", "WRITE", "default_database_url", "open_engine", "safe_url"]

#: How long a SQLite transaction waits for another process' write lock before failing.
BUSY_TIMEOUT_SECS = 30.0
#: The execution option that marks the writer engine (``BEGIN IMMEDIATE`` on SQLite).
WRITE = "spine_write"


def default_database_url(data_dir: str | Path) -> str:
    """The SQLite file of a data directory: ``sqlite:///<data_dir>/spine.db``."""
    return f"sqlite:///{Path(data_dir) / 'spine.db'}"


def safe_url(url: str) -> str:
    """``url`` with any password masked, for logs and messages."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # an unparseable URL is reported by open_engine; never echo it whole
        return "<unparseable database URL>"


def open_engine(url: str) -> Engine:
    """An engine for ``url``; a SQLite file's directory is created when missing.

    # Errors
    ``sqlalchemy.exc.ArgumentError`` for a URL it cannot parse, ``NoSuchModuleError`` for an
    unknown dialect or driver.
    """
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return create_engine(parsed, pool_pre_ping=True)
    database = parsed.database or ""
    if database and database != ":memory:" and not database.startswith("file:"):
        Path(database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(parsed, connect_args={"timeout": BUSY_TIMEOUT_SECS})

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # no implicit BEGIN: ours below
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_SECS * 1000)}")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection: Connection) -> None:
        immediate = connection.get_execution_options().get(WRITE, False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return engine
