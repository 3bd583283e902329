"""``spine screener`` processes for the end-to-end tests: spawned on a free loopback port over
the given nodes, and the ``screener`` fixture (one per test module, over the module's node)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from nodes import free_port, get, node_env, stop, wait_for

from reference.wire_validator import validate


def spawn_screener(directory: Path, *nodes: str, config: str = "") -> tuple[subprocess.Popen[str], str]:
    """A screener over ``nodes``; ``config``: TOML settings of its configuration file."""
    port = free_port()
    args = [sys.executable, "-m", "spine.cli", "screener", "--port", str(port), "--data-dir", str(directory)]
    if config:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "screener.toml").write_text(config)
        args += ["--config", str(directory / "screener.toml")]
    for node in nodes:
        args += ["--node", node]
    process = subprocess.Popen(args, env=node_env(directory), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return process, f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def screener(base: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A screener over the module's node, RUNNING and folding live closes."""
    process, url = spawn_screener(tmp_path_factory.mktemp("screener"), base)
    try:
        wait_for(process, lambda: get(url + "/v2/screener/health")[1]["process_state"] == "RUNNING", "running")
        wait_for(process, lambda: get(url + "/v2/screener/health")[1]["processed"] > 0, "folding closes")
        yield url
    finally:
        out, err = stop(process)
        assert process.returncode == 0, err


def ok(url: str) -> dict[str, Any]:
    status, document = get(url)
    assert status == 200, document
    validate(document)
    return document


def pages(url: str, sep: str = "?") -> list[dict[str, Any]]:
    out = [ok(url + f"{sep}limit=100")]
    while out[-1]["next_cursor"] is not None:
        out.append(ok(url + f"{sep}limit=100&cursor={out[-1]['next_cursor']}"))
    return out
