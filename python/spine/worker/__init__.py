"""``spine worker``: runs queued backtest jobs, each in a process of its own, from the store
the gateway side writes (``spine.jobs``)."""

from __future__ import annotations

from spine.worker.config import WorkerConfig, load_config
from spine.worker.main import run_worker

__all__ = ["WorkerConfig", "load_config", "run_worker"]
