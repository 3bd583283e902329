"""Worker configuration: a TOML file (``--config`` or ``SPINE_WORKER_CONFIG``) over the
embedded defaults, then ``SPINE_WORKER_*`` environment overrides, then the command line's
flags (``spine.settings``).

The defaults meet the other processes' defaults: the database is the gateway's store
(``sqlite:///var/spine-gateway/spine.db``), the catalog the default node's
(``var/spine/catalog``).
"""

from __future__ import annotations

import importlib.util
import os
import socket
from collections.abc import Mapping
from typing import ClassVar

import msgspec

from spine.jobs.database import default_database_url
from spine.settings import ConfigError, Settings, load_settings

__all__ = ["ConfigError", "WorkerConfig", "load_config", "split_runner"]


class WorkerConfig(Settings, forbid_unknown_fields=True, frozen=True):
    FILE_VARIABLE: ClassVar[str] = "SPINE_WORKER_CONFIG"
    ENVIRONMENT_PREFIX: ClassVar[str] = "SPINE_WORKER"
    ENVIRONMENT_KEYS: ClassVar[tuple[str, ...]] = (
        "worker_id",
        "database",
        "catalogs",
        "data_dir",
        "runner",
        "heartbeat_secs",
        "stale_secs",
        "poll_secs",
        "max_attempts",
        "kill_grace_secs",
    )
    WHAT: ClassVar[str] = "worker configuration"

    #: Names the worker in the job table and its events; empty: ``<host name>-<process id>``.
    worker_id: str = ""
    #: Where the default SQLite store lives: ``<data_dir>/spine.db`` (the gateway's default).
    data_dir: str = "var/spine-gateway"
    #: The store's SQLAlchemy URL (``sqlite:///PATH`` or ``postgresql+psycopg://...``);
    #: empty: the SQLite file under ``data_dir``.
    database: str = ""
    #: Node catalog directories a run reads bars from (each holds ``external/`` and ``internal/``).
    catalogs: list[str] = msgspec.field(default_factory=lambda: ["var/spine/catalog"])
    #: The function a job's process calls, ``package.module:function`` (see spine.worker.child).
    runner: str = "spine.backtest.job:run"
    #: The worker proves it holds its job this often, and reads the job's cancel flag.
    heartbeat_secs: float = 2.0
    #: A RUNNING job whose heartbeat is older than this is taken back (its worker is lost).
    stale_secs: float = 10.0
    #: An idle worker looks for a queued job this often.
    poll_secs: float = 0.05
    #: Attempts a job is given before a lost worker fails it instead of requeueing it.
    max_attempts: int = 2
    #: A run's process asked to stop (SIGTERM) is killed (SIGKILL) after this long.
    kill_grace_secs: float = 2.0

    def __post_init__(self) -> None:
        if len(self.worker_id) > 128:
            raise ConfigError(f"worker_id: {len(self.worker_id)} characters; allowed at most 128")
        if not self.catalogs or any(not directory for directory in self.catalogs):
            raise ConfigError(f"catalogs: {self.catalogs}; allowed: one or more directories")
        self.check_seconds("heartbeat_secs", "stale_secs", "poll_secs", "kill_grace_secs")
        if self.stale_secs < 2 * self.heartbeat_secs:
            raise ConfigError(
                f"stale_secs {self.stale_secs} is below twice heartbeat_secs {self.heartbeat_secs}; "
                "a live worker would be taken for lost"
            )
        self.check_range("max_attempts", 1, 100)
        module, _ = split_runner(self.runner)
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise ConfigError(f"runner {self.runner!r}: no module {module!r}")

    @property
    def database_url(self) -> str:
        return self.database or default_database_url(self.data_dir)

    @property
    def name(self) -> str:
        return self.worker_id or f"{socket.gethostname()}-{os.getpid()}"


def split_runner(runner: str) -> tuple[str, str]:
    """``package.module:function`` (or ``package.module.function``) as (module, function).

    # Errors
    :class:`ConfigError` when either part is missing."""
    module, _, function = runner.partition(":") if ":" in runner else runner.rpartition(".")
    if not module or not function:
        raise ConfigError(f"runner {runner!r}: allowed 'package.module:function'")
    return module, function


def load_config(path: str | None = None, environ: Mapping[str, str] = os.environ) -> WorkerConfig:
    """The file (if any) over the defaults, then the environment over both."""
    return load_settings(WorkerConfig, path, environ)
