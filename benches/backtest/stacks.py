"""A backtest stack for the benchmarks, through real processes on loopback: a ``spine
gateway`` (private-operator, SQLite) with the EMA-cross template saved, and idle ``spine
worker`` processes with the real runner."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(ROOT / "tests" / "unit" / "backtest"))

from backtest_support import IID  # noqa: E402
from gateways import save_strategy, spawn_gateway  # noqa: E402
from nodes import free_port, get, stop, wait_for  # noqa: E402
from workers import clean_environ, worker_argv  # noqa: E402

__all__ = ["stack"]


@contextmanager
def stack(
    home: Path, catalog: Path, workers: int, strategy_id: str = "queue", instrument_id: str = IID, config: str = ""
) -> Iterator[str]:
    """A gateway (``config``: more of its TOML) with the EMA-cross template saved as
    ``strategy_id`` on ``instrument_id``, and ``workers`` idle workers reading ``catalog``."""
    dead = f"http://127.0.0.1:{free_port()}"
    process, gateway = spawn_gateway(home / "gateway", [dead], dead, config, SPINE_DEPLOYMENT_MODE="private-operator")
    with ExitStack() as stack:
        stack.callback(stop, process)
        wait_for(process, lambda: get(gateway + "/v2/health")[0] == 200, "answering")
        files = get(gateway + "/v2/strategy-templates/ema_cross")[1]["files"]
        for f in files:
            f["content"] = f["content"].replace("BTCUSDT.SIM", instrument_id)
        save_strategy(gateway, strategy_id, files)
        env = clean_environ()
        logs = []
        for number in range(workers):
            log = stack.enter_context(open(home / f"worker-{number}.log", "wb"))
            logs.append(home / f"worker-{number}.log")
            worker = subprocess.Popen(
                worker_argv(f"sqlite:///{home / 'gateway' / 'spine.db'}", [catalog], f"w{number}"),
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
            stack.callback(_end, worker)
        deadline = time.monotonic() + 120
        while not all("store " in p.read_text() for p in logs):  # each worker says when it is polling
            assert time.monotonic() < deadline, [p.read_text()[-2000:] for p in logs]
            time.sleep(0.05)
        yield gateway


def _end(worker: subprocess.Popen[bytes]) -> None:
    worker.terminate()
    worker.wait(60)
