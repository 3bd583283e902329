"""Real ``spine worker`` processes for the end-to-end tests: spawned on a store with the test
runner (tests/unit/jobs/jobs_fake_runner.py) and short heartbeats, their output in files,
and bounded waits that poll the database and fail loudly with the workers' output.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from nodes import terminate

ROOT = Path(__file__).resolve().parents[2]
#: Heartbeat 0.3 s, stale after 1 s: a lost worker's job is taken back within ~1.5 s.
FAST = {
    "SPINE_WORKER_HEARTBEAT_SECS": "0.3",
    "SPINE_WORKER_STALE_SECS": "1.0",
    "SPINE_WORKER_POLL_SECS": "0.05",
    "SPINE_WORKER_KILL_GRACE_SECS": "1.0",
    "SPINE_WORKER_RUNNER": "jobs_fake_runner:run",
}
#: The same beats for a worker with the real runner.
REAL = {k: v for k, v in FAST.items() if k != "SPINE_WORKER_RUNNER"}
#: The longest any wait here takes (a loaded host is slow, not broken).
WAIT_SECS = 60.0


def clean_environ() -> dict[str, str]:
    """This process's environment without any ``SPINE_`` setting (each test names its own)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("SPINE_")}


def worker_argv(database: str, catalogs: Sequence[Path], worker_id: str) -> list[str]:
    """The command line of ``spine worker`` ``worker_id`` on ``database``, reading ``catalogs``."""
    read = [arg for catalog in catalogs for arg in ("--catalog", str(catalog))]
    return [sys.executable, "-m", "spine.cli", "worker", "--database", database, *read, "--id", worker_id]


class Workers:
    """The workers a test started, each stopped (or killed) on the way out."""

    def __init__(self, directory: Path, database: str) -> None:
        self.directory = directory
        self.database = database
        self.processes: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, name: str, **environ: str) -> subprocess.Popen[bytes]:
        env = clean_environ() | FAST | environ
        # The fake runner comes from the tests; the package from wherever the test run reads it.
        env["PYTHONPATH"] = os.pathsep.join(
            filter(None, [str(ROOT / "tests" / "unit" / "jobs"), os.environ.get("PYTHONPATH")])
        )
        with open(self.directory / f"{name}.log", "ab") as log:
            process = subprocess.Popen(
                worker_argv(self.database, [self.directory / "catalog"], name),
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self.processes[name] = process
        return process

    def output(self) -> str:
        return "\n".join(
            f"--- {name}:\n{(self.directory / f'{name}.log').read_text()[-3000:]}" for name in self.processes
        )

    def ready(self, name: str) -> None:
        """Wait until the worker said it opened the store."""
        wait_until(lambda: "store " in (self.directory / f"{name}.log").read_text(), f"worker {name} ready", self)

    def kill(self, name: str) -> None:
        process = self.processes[name]
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=WAIT_SECS)

    def stop(self, name: str) -> int:
        """SIGTERM, then its exit code (SIGKILL and a failure past the deadline)."""
        process = self.processes[name]
        stopped, _, _ = terminate(process, WAIT_SECS)
        if not stopped:
            raise AssertionError(f"worker {name} ignored SIGTERM:\n{self.output()}")
        return process.returncode


@contextmanager
def running_workers(directory: Path, database: str) -> Iterator[Workers]:
    workers = Workers(directory, database)
    try:
        yield workers
    finally:
        for process in workers.processes.values():
            if process.poll() is None:
                process.kill()
                process.wait(timeout=10)


@contextmanager
def real_worker(home: Path, database: str, catalogs: Sequence[Path], name: str = "w1") -> Iterator[None]:
    """A ``spine worker`` with the real runner and short beats on ``database``, reading
    ``catalogs``; its output in ``home/<name>.log``, whose tail is printed when it stops."""
    with open(home / f"{name}.log", "wb") as log:
        worker = subprocess.Popen(
            worker_argv(database, catalogs, name), env=clean_environ() | REAL, stdout=log, stderr=subprocess.STDOUT
        )
        try:
            yield
        finally:
            worker.terminate()
            worker.wait(30)
    print((home / f"{name}.log").read_text()[-3000:])


def wait_until(
    condition: Callable[[], bool], what: str, workers: Workers | None = None, seconds: float = WAIT_SECS
) -> float:
    """Poll ``condition`` until it holds; the seconds it took. Fails with the workers' output
    past ``seconds``."""
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        if condition():
            return time.monotonic() - start
        time.sleep(0.05)
    raise AssertionError(f"not {what} within {seconds:g} s" + (f":\n{workers.output()}" if workers else ""))


def gone(pid: int) -> bool:
    """The process has ended (a zombie awaiting its reaper counts as ended)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return True
    return fields[0] in ("Z", "X")
