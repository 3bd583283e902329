"""``spine up`` as a test starts it: a real process over a directory of its own, its output in
files, bounded waits that fail with that output, and a stop that fails past its bound."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from nodes import node_env, poll, terminate

#: A cold node imports nautilus_trader and hydrates; each child has its own bound inside.
UP_SECS = 150.0
#: spine up stops its children one after the other (workers, gateway, screener, node), each
#: within its own bound.
STOP_SECS = 120.0


class Up:
    def __init__(self, directory: Path, port: int, flags: tuple[str, ...] = (), **env: str) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.directory, self.out, self.err = directory, directory / "up.out", directory / "up.err"
        with open(self.out, "w") as out, open(self.err, "w") as err:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "spine.cli",
                    "up",
                    "--data-dir",
                    str(directory / "stack"),
                    "--port",
                    str(port),
                    *flags,
                ],
                env=node_env(directory / "unused", SPINE_SIM_SPEED="600", **env),
                stdout=out,
                stderr=err,
                text=True,
            )

    def text(self) -> str:
        return self.out.read_text() + self.err.read_text()

    def until(self, what: str, condition: Any, seconds: float) -> None:
        """Poll ``condition`` until it holds (errors count as not yet); fail with the output
        when spine up exits or ``seconds`` pass first."""
        if poll(self.process, condition, seconds, interval=0.2):
            return
        assert self.process.poll() is None, f"spine up exited ({self.process.returncode}) before {what}:\n{self.text()}"
        raise AssertionError(f"spine up: not {what} within {seconds:g} s:\n{self.text()[-4000:]}")

    def urls(self) -> dict[str, Any]:
        path = self.directory / "stack" / "up.json"
        self.until("up (up.json)", path.exists, UP_SECS)
        urls: dict[str, Any] = json.loads(path.read_text())
        return urls

    def children(self) -> dict[str, int]:
        """Its child processes from /proc: name (node, screener, gateway, worker-N) -> pid."""
        out = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
                argv = (entry / "cmdline").read_bytes().decode().split("\0")
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == self.process.pid and "spine.cli" in argv:
                name = argv[argv.index("spine.cli") + 1]
                if name == "worker":  # --id up-worker-N
                    name = argv[argv.index("--id") + 1].removeprefix("up-")
                out[name] = int(entry.name)
        return out

    def stop(self) -> int:
        """SIGTERM; its exit code once it exited (fails past the bound)."""
        stopped, _, _ = terminate(self.process, STOP_SECS)
        if not stopped:
            raise AssertionError(f"spine up did not exit within {STOP_SECS:g} s of SIGTERM:\n{self.text()}")
        return self.process.returncode


@contextmanager
def running_up(directory: Path, port: int = 0, flags: tuple[str, ...] = (), **env: str) -> Iterator[Up]:
    up = Up(directory, port, flags, **env)
    try:
        yield up
    finally:
        if up.process.poll() is None:  # a failed test: kill its children, then spine up
            for pid in up.children().values():
                os.kill(pid, signal.SIGKILL)
            up.process.kill()
            up.process.wait()
