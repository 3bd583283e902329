"""``spine worker``: runs queued backtest jobs, each in a process of its own, from the store
the gateway side writes (``spine.jobs``). :mod:`.config`, :mod:`.main` and :mod:`.service` as
every process, :mod:`.child` the run's own process; no ``api.py``: it serves no HTTP."""

from __future__ import annotations

from spine.worker.config import WorkerConfig, load_config
from spine.worker.main import run_worker

__all__ = ["WorkerConfig", "load_config", "run_worker"]
