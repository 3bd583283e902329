"""Real ``spine node`` processes for the end-to-end tests, and the HTTP helpers that talk to
them. Test modules import from here (and take the ``base`` fixture from conftest.py); no
test module imports another.

Every wait is bounded and fails loudly: a node that exits, or is not ready within its
deadline, raises :class:`NodeNotReady` with its exit code and the tail of its stderr, so a
broken start is one clear error rather than dozens of confusing failures. The waiting loop
(:func:`poll`) and the stop (:func:`terminate`) also serve workers.py and ups.py, which
fail in their own words; :func:`spine_cli` runs any ``spine`` command to its end.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from reference.wire_validator import validate

#: A venue clock start far from the wall: every run replays the same seeded minutes.
START = 29_000_000 * 60 * 10**9
#: How long a node may take to answer ``ready`` and warm up (a busy host is slow, not broken).
READY_SECS = 60.0
#: How long a stopping node may take to exit after SIGTERM (docs/contract.md bounds it).
STOP_SECS = 60.0


class NodeNotReady(AssertionError):
    """The node exited, or did not get ready within its deadline."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def node_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """The test's environment without any ``SPINE_*`` of the caller's, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPINE_")}
    env["SPINE_DATA_DIR"] = str(data_dir)
    # A retention within the hydrated window: no background backfill competes with the test
    # (test_backfill_node.py tests it).
    env["SPINE_RETENTION_DAYS"] = "0.01"
    env.update(extra)
    return env


def spawn(config: Path | None, env: dict[str, str]) -> subprocess.Popen[str]:
    args = [sys.executable, "-m", "spine.cli", "node"] + (["--config", str(config)] if config else [])
    return subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def poll(process: subprocess.Popen[Any], condition: Callable[[], bool], seconds: float, interval: float = 0.1) -> bool:
    """Poll ``condition`` every ``interval`` (connection errors count as not yet) while ``process``
    runs: whether it held before the process exited or ``seconds`` passed. The one waiting loop
    of the process helpers here and in workers.py and ups.py; each fails in its own words."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if condition():
                return True
        except (OSError, KeyError, ValueError):
            pass
        time.sleep(interval)
    return False


def terminate(process: subprocess.Popen[Any], seconds: float) -> tuple[bool, Any, Any]:
    """SIGTERM (unless it already exited), then whether it exited within ``seconds`` (it is
    SIGKILLed past them) and its output (None where not piped)."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        return (True, *process.communicate(timeout=seconds))
    except subprocess.TimeoutExpired:
        process.kill()
        return (False, *process.communicate(timeout=10))


def wait_for(
    process: subprocess.Popen[str], condition: Callable[[], bool], what: str, seconds: float = READY_SECS
) -> None:
    """Poll ``condition`` (connection errors count as not yet) until it holds; raise
    :class:`NodeNotReady` when the process exits or ``seconds`` pass first."""
    if poll(process, condition, seconds):
        return
    if process.poll() is not None:
        raise NodeNotReady(f"the node exited ({process.returncode}) before {what}:\n{_tail(process)}")
    stop(process)
    raise NodeNotReady(f"the node was not {what} within {seconds:g} s:\n{_tail(process)}")


def stop(process: subprocess.Popen[str], seconds: float = STOP_SECS) -> tuple[str, str]:
    """SIGTERM, then the process' output once it exited (SIGKILL past ``seconds``)."""
    stopped, out, err = terminate(process, seconds)
    if not stopped:
        raise NodeNotReady(f"the node ignored SIGTERM for {seconds:g} s:\n{err[-3000:]}")
    return out, err


def _tail(process: subprocess.Popen[str]) -> str:
    if process.poll() is None:
        return "(still running)"
    _, err = process.communicate(timeout=10)
    return err[-3000:]


def bars_seen(url: str) -> int:
    """1-minute bars the node took live so far (its status counters)."""
    return int(get(url + "/v2/status")[1]["counters"]["bars"])


def restartable_node(directory: Path) -> tuple[Path, dict[str, str], str]:
    """A node's configuration file, environment and base URL, to start it again and again on
    one port and one data directory."""
    port = free_port()
    config = directory / "node.toml"
    config.write_text(
        f"flush_secs = 0.5\nhydrate_minutes = 30\nport = {port}\n[sim]\nstart_ns = {START}\nspeed = 600\n"
    )
    return config, node_env(directory / "data"), f"http://127.0.0.1:{port}"


@contextmanager
def _node_process(
    directory: Path, port: int, settings: str, sim: str, environ: dict[str, str]
) -> Iterator[subprocess.Popen[str]]:
    """A ``spine node`` process (config ``directory/node.toml``, data ``directory/data``), stopped
    on the way out; not waited for."""
    config = directory / "node.toml"
    config.write_text(
        f"flush_secs = 0.5\nhydrate_minutes = 30\nport = {port}\n{settings}"
        f"[sim]\nstart_ns = {START}\nspeed = 600\n{sim}"
    )
    process = spawn(config, node_env(directory / "data", **environ))
    try:
        yield process
    finally:
        stop(process)


def _warm(process: subprocess.Popen[str], url: str, warm_bars: int) -> None:
    wait_for(process, lambda: bool(get(url + "/v2/health")[1]["ready"]), "ready")
    if warm_bars:
        wait_for(process, lambda: bars_seen(url) >= warm_bars, f"warm ({warm_bars} live bars)")


@contextmanager
def running_node(
    directory: Path, settings: str = "", *, sim: str = "", warm_bars: int = 1_000, **environ: str
) -> Iterator[str]:
    """A ``spine node`` on a free loopback port (TOML ``settings`` at the top level and ``sim``
    in its ``[sim]`` table, ``SPINE_*`` ``environ`` added; the venue at 600x from :data:`START`),
    once it is ready and has taken ``warm_bars`` live 1-minute bars (several venue minutes:
    bars, facts, derived buckets); its base URL."""
    port = free_port()
    with _node_process(directory, port, settings, sim, environ) as process:
        url = f"http://127.0.0.1:{port}"
        _warm(process, url, warm_bars)
        yield url


@contextmanager
def running_nodes(
    directory: Path,
    venues: tuple[str, ...] = ("SIM", "SIMB"),
    settings: str = "",
    *,
    warm_bars: int = 1_000,
    **environ: str,
) -> Iterator[list[str]]:
    """One node per simulated venue name, started together, each as :func:`running_node` starts
    one (its files under ``directory/<venue lower case>``, its node id ``spine-<venue lower
    case>``, so ``settings`` must not set ``node_id``); their base URLs in ``venues``' order."""
    ports: list[int] = []
    while len(ports) < len(venues):
        port = free_port()
        if port not in ports:
            ports.append(port)
    with ExitStack() as stack:
        started = []
        for venue, port in zip(venues, ports, strict=True):
            home = directory / venue.lower()
            home.mkdir(parents=True, exist_ok=True)
            top = f'node_id = "spine-{venue.lower()}"\n{settings}'
            process = stack.enter_context(_node_process(home, port, top, f'venue_name = "{venue}"\n', environ))
            started.append((process, f"http://127.0.0.1:{port}"))
        for process, url in started:
            _warm(process, url, warm_bars)
        yield [url for _, url in started]


# HTTP


def spine_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``spine ARGS`` run to its end (``env``: its whole environment; None: this one's); its exit
    code and text output."""
    return subprocess.run(
        [sys.executable, "-m", "spine.cli", *args], env=env, capture_output=True, text=True, timeout=timeout
    )


def spine_import(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``spine import`` with ``args``, which must succeed; what it printed."""
    done = spine_cli("import", *args, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return done


def get(url: str, timeout: float = 10) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        with error:  # closed now, not whenever the collector finds it (a ResourceWarning then)
            return error.code, json.loads(error.read())


def post(url: str, body: object) -> tuple[int, Any]:
    """POST ``body`` (bytes as they are, anything else as JSON)."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(url, method="POST", data=data, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        with error:
            return error.code, json.loads(error.read())


def envelope(got: tuple[int, Any], status: int, symbol: str) -> str:
    """Check an error answer (status, envelope, code class, symbol); its detail text."""
    code, body = got
    assert code == status, body
    validate(body, "svc.error_envelope")
    assert body["error"]["detail"].startswith(symbol + ": "), body
    assert str(body["error"]["code"]).startswith(str(status)), body
    text: str = body["error"]["detail"].removeprefix(symbol + ": ")
    return text


def ok(base: str, path: str) -> dict[str, Any]:
    status, document = get(base + path)
    assert status == 200, (path, document)
    validate(document)
    return document


def refused(base: str, path: str, status: int, symbol: str) -> None:
    envelope(get(base + path), status, symbol)


def sse(url: str, events: int, timeout: float = 10.0) -> list[tuple[str, dict[str, Any]]]:
    """The first ``events`` named events of an SSE stream, as ``(event, document)``."""
    out: list[tuple[str, dict[str, Any]]] = []
    with urllib.request.urlopen(url, timeout=timeout) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        name = None
        for raw in response:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: ") and name is not None:
                out.append((name, json.loads(line[6:])))
                if len(out) >= events:
                    return out
    return out
