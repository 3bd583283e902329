"""The backtest runner (``spine.backtest.job:run``) for worker processes started by tests:
the same function, with the plain-Python kernel stand-in installed first when the extension
lacks ``StrategyKernel`` (a no-op once it has it)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/, for reference.*

from kernel_standin import install  # noqa: E402
from spine.backtest.job import run  # noqa: E402

install()

__all__ = ["run"]
