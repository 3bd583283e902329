"""Where Optuna keeps the studies' trials.

- With the default SQLite database: Optuna's journal file ``studies.journal`` in the
  gateway's data directory (``benches/bench_study_storage.py`` measured it several times
  faster than Optuna's RDB storage on SQLite, and it needs no second writer on the file).
- With PostgreSQL: Optuna's RDB storage in the same database as the jobs, with heartbeats, so
  schedulers on several hosts share the studies. A trial whose heartbeat goes stale (its
  scheduler died between asking and submitting, or lost its lease) is failed by
  ``fail_stale_trials`` and asked again with the same parameters
  (``RetryHeartbeatStaleTrialCallback``, the callback Optuna calls ``RetryFailedTrialCallback``
  in its older releases).

Either opens in ``optuna-dashboard`` as it is (the README shows how).
"""

from __future__ import annotations

from pathlib import Path

import optuna
from sqlalchemy.engine import make_url

from spine.studies.driver import journal_storage

__all__ = ["GRACE_SECS", "HEARTBEAT_SECS", "MAX_RETRY", "journal_path", "open_storage"]

#: How often a scheduler says its trials are alive, and how long a silent one is trusted.
HEARTBEAT_SECS = 5
GRACE_SECS = 30
#: A trial failed for a stale heartbeat is asked again at most this many times.
MAX_RETRY = 3


def journal_path(data_dir: str | Path) -> Path:
    return Path(data_dir) / "studies.journal"


def open_storage(database_url: str, data_dir: str | Path) -> optuna.storages.BaseStorage:
    """The trial storage beside the job store at ``database_url`` (see the module docs)."""
    if make_url(database_url).get_backend_name() == "sqlite":
        return journal_storage(journal_path(data_dir))
    return optuna.storages.RDBStorage(
        database_url,
        engine_kwargs={"pool_pre_ping": True},
        heartbeat_interval=HEARTBEAT_SECS,
        grace_period=GRACE_SECS,
        heartbeat_stale_trial_callback=optuna.storages.RetryHeartbeatStaleTrialCallback(max_retry=MAX_RETRY),
    )
