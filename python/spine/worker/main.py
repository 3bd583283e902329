"""``spine worker``: the process entry point. SIGINT and SIGTERM stop it: it claims nothing
more, ends its run (if any) and hands the job back to the queue, and exits 0. A bad
configuration exits 2; a database it cannot open at start exits 1. It never serves HTTP."""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Mapping, Sequence
from types import FrameType

from sqlalchemy import exc

from spine.jobs import StoreError, safe_url
from spine.lifeline import release_stop_signals
from spine.settings import ConfigError, flag_overrides
from spine.worker.config import WorkerConfig, load_config

__all__ = ["run_worker"]


def run_worker(
    config_path: str | None,
    database: str | None = None,
    catalogs: Sequence[str] = (),
    worker_id: str | None = None,
    data_dir: str | None = None,
    environ: Mapping[str, str] = os.environ,
) -> int:
    """Run until SIGINT or SIGTERM; the flags override the file and the environment."""
    # Taken first: a stop asked while the worker still starts (a supervisor stopping it at
    # once) ends it cleanly once started, never by the default handler.
    stopping = threading.Event()

    def stop(signum: int, _frame: FrameType | None) -> None:
        stopping.set()

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, stop)
    release_stop_signals()  # `spine up` starts it with them blocked: one asked during imports lands now
    overrides = flag_overrides(
        environ,
        WorkerConfig.ENVIRONMENT_PREFIX,
        database=database,
        catalogs=tuple(catalogs),
        worker_id=worker_id,
        data_dir=data_dir,
    )
    try:
        config = load_config(config_path, overrides)
    except ConfigError as error:
        print(f"spine worker: {error}", file=sys.stderr)
        return 2
    from spine.worker.service import Worker

    try:
        worker = Worker(config)
    except (exc.SQLAlchemyError, StoreError, OSError) as error:
        print(f"spine worker: cannot open the store {safe_url(config.database_url)}: {error}", file=sys.stderr)
        return 1

    worker.stop = stopping
    worker.say(f"store {safe_url(config.database_url)}; catalogs {', '.join(config.catalogs)}; runner {config.runner}")
    try:
        worker.run()
    finally:
        worker.store.close()
    worker.say("stopped")
    return 0
