"""Server processes: each started with its log in a file, polled on its port with bounded
retries, and always stopped (SIGTERM, then SIGKILL) when its block ends."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"


class ServerFailed(RuntimeError):
    """A server did not come up in time (its log tail is in the message)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def get(url: str, timeout: float = 10.0) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, error.read()


def python(*args: str) -> list[str]:
    return [sys.executable, *args]


def environment(**extra: str) -> dict[str, str]:
    # SPINE_* from the caller's shell must not reconfigure the node under test.
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPINE_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    # A retention within the hydrated window: no background backfill in what is measured.
    env["SPINE_RETENTION_DAYS"] = "0.01"
    return {**env, **extra}


@contextlib.contextmanager
def serving(
    name: str, argv: Sequence[str], url: str, log_dir: Path, env: dict[str, str] | None = None, timeout: float = 60.0
) -> Iterator[subprocess.Popen[bytes]]:
    """Run ``argv`` until the block ends; ready once ``url`` answers 200."""
    log = log_dir / f"{name}.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            list(argv),
            cwd=ROOT,
            env=env or environment(),
            stdout=sink,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    try:
        wait_ready(process, url, log, timeout)
        yield process
    finally:
        stop(process)


def wait_ready(process: subprocess.Popen[bytes], url: str, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        with contextlib.suppress(OSError):
            if get(url, timeout=2.0)[0] == 200:
                return
        time.sleep(0.1)
    tail = log.read_text(errors="replace")[-2000:]
    raise ServerFailed(f"{log.stem} not ready at {url} (exit {process.poll()}):\n{tail}")


def stop(process: subprocess.Popen[bytes], grace: float = 30.0) -> None:
    """SIGTERM (the node flushes its catalogs on it), then SIGKILL after ``grace`` seconds."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)
