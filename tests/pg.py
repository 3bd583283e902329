"""A throwaway PostgreSQL cluster for tests: ``initdb`` into a temporary directory (as the
``postgres`` user when running as root), ``pg_ctl start`` on a free loopback port with its
socket in that directory, then stopped and removed. Tests skip, saying why, only when
PostgreSQL's server binaries are not installed (``scripts/setup.sh`` installs them as root)."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["cluster_or_skip", "fresh_database", "initdb", "postgres_cluster"]

#: Bounds every PostgreSQL command (a slow host is slow, not broken).
COMMAND_SECS = 120


def initdb() -> Path | None:
    """The newest installed ``initdb`` (Debian's /usr/lib/postgresql/N/bin, else PATH)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if found:
        return Path(found[-1])
    on_path = shutil.which("initdb")
    return Path(on_path) if on_path else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def postgres_cluster() -> Iterator[str]:
    """A running cluster's SQLAlchemy URL (``postgresql+psycopg://postgres@127.0.0.1:PORT/postgres``);
    the cluster is stopped and its directory removed on the way out."""
    binary = initdb()
    assert binary is not None, "initdb is not installed"
    bindir = binary.parent
    home = Path(tempfile.mkdtemp(prefix="spine-pg-"))
    prefix: list[str] = []
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root: as its own user
        user = pwd.getpwnam("postgres")
        os.chown(home, user.pw_uid, user.pw_gid)
        prefix = ["runuser", "-u", "postgres", "--"]
    data, log = home / "data", home / "log"
    port = _free_port()
    options = (
        f"-p {port} -k {home} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off "
        "-c full_page_writes=off"
    )

    def command(*args: str) -> None:
        result = subprocess.run([*prefix, *args], capture_output=True, text=True, timeout=COMMAND_SECS)
        if result.returncode != 0:
            tail = log.read_text()[-2000:] if log.exists() else ""
            raise RuntimeError(f"{' '.join(args)} exited {result.returncode}:\n{result.stdout}{result.stderr}{tail}")

    try:
        command(str(binary), "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync")
        command(str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(log), "-w", "-t", "60", "start")
        try:
            yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
        finally:
            command(str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
    finally:
        shutil.rmtree(home, ignore_errors=True)


@contextmanager
def cluster_or_skip() -> Iterator[str]:
    """:func:`postgres_cluster`, or the test skipped, saying why, when PostgreSQL is not installed."""
    import pytest

    if initdb() is None:
        pytest.skip(
            "PostgreSQL is not installed (no initdb under /usr/lib/postgresql/*/bin or on PATH); "
            "scripts/setup.sh installs Debian's postgresql when run as root"
        )
    with postgres_cluster() as url:
        yield url


def fresh_database(url: str, name: str) -> str:
    """Create the empty database ``name`` on the cluster at ``url``; its URL."""
    from sqlalchemy import create_engine, text

    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
    finally:
        engine.dispose()
    return url.rsplit("/", 1)[0] + "/" + name
