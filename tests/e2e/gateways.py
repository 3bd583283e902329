"""``spine gateway`` processes for the end-to-end tests: spawned on a free loopback port in
front of the given nodes and screener, looking at its upstreams every half second."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from nodes import free_port, get, node_env, ok, post, stop, wait_for


def spawn_gateway(
    directory: Path, nodes: list[str], screener: str, config: str = "", **environ: str
) -> tuple[subprocess.Popen[str], str]:
    """A gateway over ``nodes`` and ``screener``; ``config``: more TOML settings of its
    configuration file; ``environ``: ``SPINE_*`` variables."""
    directory.mkdir(parents=True, exist_ok=True)
    port = free_port()
    (directory / "gateway.toml").write_text(f"refresh_secs = 0.5\n{config}")
    args = [
        sys.executable,
        "-m",
        "spine.cli",
        "gateway",
        "--port",
        str(port),
        "--data-dir",
        str(directory),
        "--config",
        str(directory / "gateway.toml"),
        "--screener",
        screener,
    ]
    for node in nodes:
        args += ["--node", node]
    return subprocess.Popen(
        args, env=node_env(directory, **environ), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ), f"http://127.0.0.1:{port}"


@contextmanager
def template_gateway(directory: Path, config: str = "") -> Iterator[str]:
    """A private-operator gateway with no live upstream (its nodes and screener a dead port)
    and the ema_cross template saved as strategy ``ema``; its URL. It must exit 0 when stopped."""
    dead = f"http://127.0.0.1:{free_port()}"
    process, url = spawn_gateway(directory, [dead], dead, config, SPINE_DEPLOYMENT_MODE="private-operator")
    try:
        wait_for(process, lambda: get(url + "/v2/health")[0] == 200, "answering")
        save_strategy(url, "ema", ok(url, "/v2/strategy-templates/ema_cross")["files"])
        yield url
    finally:
        _, err = stop(process)
        assert process.returncode == 0, err


def save_strategy(url: str, strategy_id: str, files: list[dict[str, Any]], message: str = "") -> Any:
    """Save ``files`` as the first revision of ``strategy_id`` on the gateway at ``url``; the
    saved revision (the save must answer 201)."""
    status, revision = post(
        url + "/v2/strategies",
        {
            "version": "spine.v2",
            "schema_id": "svc.strategy_revision_save_request",
            "schema_version": 2,
            "strategy_id": strategy_id,
            "parent_revision_id": None,
            "message": message,
            "files": files,
        },
    )
    assert status == 201, revision
    return revision


def raw(url: str, method: str = "GET", body: object = None) -> tuple[int, bytes]:
    """A request's status and body bytes, as they came (``body``: sent as JSON)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, method=method, data=data, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, error.read()


def relayed_unchanged(gateway: str, node: str, path: str, tries: int = 10) -> bool:
    """Whether the gateway answers ``path`` with the node's exact bytes: a page carries its
    live series' coverage, which may move between two reads, so one of a few back-to-back
    pairs must match."""
    return any(raw(gateway + path) == raw(node + path) for _ in range(tries))
