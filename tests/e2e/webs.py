"""``spine web`` as a test starts it: a real process on a free loopback port in front of a
gateway, in the deployment mode asked for; it must exit 0 when stopped."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from nodes import free_port, get, node_env, stop, wait_for


@contextmanager
def spine_web(directory: Path, gateway: str, mode: str | None = None) -> Iterator[str]:
    port = free_port()
    env = {} if mode is None else {"SPINE_DEPLOYMENT_MODE": mode}
    process = subprocess.Popen(
        [sys.executable, "-m", "spine.cli", "web", "--gateway", gateway, "--port", str(port)],
        env=node_env(directory, **env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(process, lambda: get(url + "/api/mode")[0] == 200, "answering")
        yield url
    finally:
        _, err = stop(process)
        assert process.returncode == 0, err
