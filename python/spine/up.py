"""``spine up``: the whole local stack in one command. A small supervisor that starts a venue
node (the embedded defaults: the simulated venue SIM), one catalog-venue node per venue
``spine import`` loaded into ``DIR/imports`` (``node-NAME``), a screener over the nodes, the
gateway in front of them, the web UI in front of the gateway and one backtest worker per core
on the gateway's database, each a ``python -m spine.cli node|screener|gateway|web|worker``
subprocess configured by flags and environment, and imports none of their internals.

Start order: the node, then each catalog node, once each ``/v2/health`` is ready the
screener, then the gateway, then the web server, then the workers (they serve nothing, so there is nothing to wait
for); each URL is printed as it answers, then ``DIR/up.json`` is written (atomically) and removed again
at exit, so its presence means "running". Every child runs in its own process group: a Ctrl-C
in a terminal reaches ``spine up`` alone, which stops the children one at a time in reverse
order with SIGTERM (the node flushes its closed bars on it), SIGKILL only past a bound. A child
that dies on its own is reported (name, exit code, the tail of its stderr); a worker is started
again after a back-off (1 s doubling to 30 s, afresh once one ran a minute), any other child is
not, and the others keep running. Child output is forwarded line by line behind the child's name.

Children end with ``spine up`` even when it cannot stop them (SIGKILL, the OOM killer): each
asks for SIGTERM on its parent's death (:mod:`spine.lifeline`). Their pids are kept in
``DIR/up.pids`` while they run, so a ``spine up`` started after one that died waits (bounded)
for those processes to end before it starts its own on the same ports and directories. A child
that ends of the SIGTERM ``spine up`` sent it stopped cleanly, whatever its exit code; workers
are started with SIGTERM held until their handler is in place.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections import deque
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import IO, Any

from spine.lifeline import PARENT_VARIABLE, hold_stop_signals

__all__ = ["DEFAULT_DIR", "DEFAULT_PORT", "run_up"]

DEFAULT_DIR = "var/spine-up"
DEFAULT_PORT = 8800
HOST = "127.0.0.1"
#: The node's and the screener's own default ports, taken when free (else any free port).
PREFERRED = {"node": 8700, "screener": 8710, "web": 8900}
#: How long each child may take to answer ready (a cold node imports nautilus_trader, then
#: reloads its series), and to exit after SIGTERM (the node's contract: 60 s, flush included).
READY_SECS = {"node": 120.0, "screener": 60.0, "gateway": 60.0, "web": 60.0}
#: A worker ends its running job's child (the job goes back to the queue) within its own bound.
STOP_SECS = {"node": 60.0, "screener": 30.0, "gateway": 30.0, "web": 30.0, "worker": 30.0}
TAIL_LINES = 20
POLL_SECS = 0.1
#: A worker that dies is started again after this back-off, doubling to the cap; a worker
#: that ran this long before it died starts the back-off afresh.
RESTART_MIN_SECS, RESTART_MAX_SECS, RESTART_RESET_SECS = 1.0, 30.0, 60.0
#: How long a new spine up waits for an earlier one's children (they stop on its death, the
#: node flushing its bars) before it gives up.
EARLIER_SECS = 90.0
#: The simulated venue the default node serves; the gateway and the screener take at most
#: MAX_NODES nodes (theirs), so at most MAX_NODES - 1 imported venues are served.
SIM_VENUE, MAX_NODES = "SIM", 8
_print_lock = threading.Lock()


def say(text: str, stream: IO[str] | None = None) -> None:
    """One whole line on stdout (or ``stream``), never interleaved with a child's."""
    with _print_lock:
        try:
            out = stream or sys.stdout
            out.write(text + "\n")
            out.flush()
        except OSError:
            pass  # our own output closed: keep supervising


class Child:
    """One process ``spine up`` started; its stdout and stderr forwarded behind its name, the
    tail of its stderr kept for a report."""

    def __init__(self, name: str, url: str | None, args: list[str], env: dict[str, str]) -> None:
        self.name, self.url, self.args = name, url, args
        #: The subcommand: ``worker-2`` is a ``spine worker``.
        self.kind = name.split("-", 1)[0]
        self.tail: deque[str] = deque(maxlen=TAIL_LINES)
        self.reported = False
        self.started = time.monotonic()
        # process_group=0: its own group, so a terminal's Ctrl-C reaches spine up only and the
        # children stop in order, once each. A worker starts with SIGTERM held until its
        # handler is in place (spine.lifeline); every child ends with spine up.
        env = {**env, PARENT_VARIABLE: str(os.getpid())}
        with hold_stop_signals() if self.kind == "worker" else nullcontext():
            self.process = subprocess.Popen(
                [sys.executable, "-m", "spine.cli", self.kind, *args],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                errors="replace",
                process_group=0,
            )
        assert self.process.stdout is not None and self.process.stderr is not None
        self.readers = [
            threading.Thread(
                target=self._forward, args=(pipe, stream, keep), daemon=True, name=f"spine-up-{name}-{what}"
            )
            for pipe, stream, keep, what in (
                (self.process.stdout, sys.stdout, False, "out"),
                (self.process.stderr, sys.stderr, True, "err"),
            )
        ]
        for reader in self.readers:
            reader.start()

    def _forward(self, pipe: IO[str], stream: IO[str], keep: bool) -> None:
        with pipe:
            for line in pipe:
                line = line.rstrip("\n")
                if keep:
                    self.tail.append(line)
                say(f"{self.name:<8} | {line}", stream)

    def exited(self) -> str:
        """``code N`` (and the signal that ended it), then the tail of its stderr."""
        for reader in self.readers:
            reader.join(timeout=2)  # until its last line is in the tail
        code = self.process.returncode
        how = f"code {code}" + (f" ({signal.Signals(-code).name})" if code < 0 else "")
        if not self.tail:
            return f"{how}; its stderr was empty"
        return f"{how}; its stderr ended:\n" + "\n".join(f"  {line}" for line in self.tail)

    def stop(self) -> bool:
        """SIGTERM, wait its bound, SIGKILL past it; True when it exited 0 in time."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(STOP_SECS[self.kind])
        except subprocess.TimeoutExpired:
            say(
                f"spine up: the {self.name} did not stop within {STOP_SECS[self.kind]:g} s of SIGTERM; SIGKILL",
                sys.stderr,
            )
            self.process.kill()
            self.process.wait()
            return False
        for reader in self.readers:
            reader.join(timeout=2)
        # Ended by the very SIGTERM sent (it came before the child's own handler): a clean stop.
        if self.process.returncode not in (0, -signal.SIGTERM):
            say(f"spine up: the {self.name} stopped with {self.exited()}", sys.stderr)
            return False
        return True


def _bindable(port: int) -> bool:
    with socket.socket() as probe:
        # As the servers bind: a port left in TIME_WAIT by an earlier run is free to them.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((HOST, port))
        except OSError:
            return False
    return True


def _free_port(taken: set[int]) -> int:
    while True:
        with socket.socket() as probe:
            probe.bind((HOST, 0))
            port = int(probe.getsockname()[1])
        if port not in taken:
            return port


def _answers(url: str, ready: Callable[[Any], bool]) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200 and ready(json.loads(response.read())))
    except (OSError, ValueError):
        return False


class Up:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.children: list[Child] = []
        self.signalled: int | None = None
        #: A child failed to start, or exited on its own.
        self.failed = False
        #: Workers to start again: name -> (when, monotonic), and the back-off each is at.
        self.restarts: dict[str, float] = {}
        self.backoff: dict[str, float] = {}

    def _add(self, child: Child) -> None:
        """Keep ``child`` (in place of an earlier one of its name) and record every pid."""
        self.children = [c for c in self.children if c.name != child.name or c.process.poll() is None] + [child]
        pids = {c.name: c.process.pid for c in self.children if c.process.poll() is None}
        temporary = self.directory / "up.pids.tmp"
        temporary.write_text(json.dumps(pids) + "\n")
        os.replace(temporary, self.directory / "up.pids")

    def _signal(self, signum: int, frame: object) -> None:
        # Only a flag: the main loop says what it does (printing here could deadlock on the
        # print lock the main thread holds).
        self.signalled = self.signalled or signum

    def start(
        self, name: str, port: int, args: list[str], env: dict[str, str], health: str, ready: Callable[[Any], bool]
    ) -> bool:
        """Start ``name`` and wait (bounded) until ``health`` answers ``ready``; False (and a
        report) when it exits first, does not get there in time, or a stop is asked."""
        url = f"http://{HOST}:{port}"
        child = Child(name, url, args, {**os.environ, **env})
        self._add(child)
        deadline = time.monotonic() + READY_SECS[child.kind]
        while not _answers(url + health, ready):
            if self.signalled is not None:
                return False
            if child.process.poll() is not None:
                child.reported = self.failed = True
                say(f"spine up: the {name} exited before it was ready, with {child.exited()}", sys.stderr)
                return False
            if time.monotonic() > deadline:
                self.failed = True
                say(
                    f"spine up: the {name} was not ready within {READY_SECS[child.kind]:g} s ({url}{health})",
                    sys.stderr,
                )
                return False
            time.sleep(POLL_SECS)
        say(f"spine up: {name:<8} {url}  (pid {child.process.pid})")
        return True

    def start_workers(self, count: int, args: list[str]) -> None:
        """``count`` backtest workers (``spine worker``): no port, nothing to wait for; one that
        exits is reported like any child."""
        for number in range(1, count + 1):
            self._worker(f"worker-{number}", [*args, "--id", f"up-worker-{number}"])

    def _worker(self, name: str, args: list[str]) -> None:
        child = Child(name, None, args, dict(os.environ))
        self._add(child)
        say(f"spine up: {name} (pid {child.process.pid})")

    def watch(self) -> None:
        """Until signalled: report each child that exits on its own, once; start a worker
        again after its back-off (see the module docs), no other child."""
        while self.signalled is None:
            for child in self.children:
                if not child.reported and child.process.poll() is not None:
                    child.reported = self.failed = True
                    self._exited(child)
            now = time.monotonic()
            for child in [c for c in self.children if self.restarts.get(c.name, now + 1) <= now]:
                del self.restarts[child.name]
                self._worker(child.name, child.args)
            if all(child.reported for child in self.children) and not self.restarts:
                say("spine up: every process has exited; stopping", sys.stderr)
                return
            time.sleep(POLL_SECS)

    def _exited(self, child: Child) -> None:
        """Report ``child``'s own exit; a worker is scheduled to start again."""
        said = f"spine up: the {child.name} exited on its own with {child.exited()}"
        if child.kind == "worker":
            ran = time.monotonic() - child.started
            delay = RESTART_MIN_SECS if ran >= RESTART_RESET_SECS else self.backoff.get(child.name, RESTART_MIN_SECS)
            self.backoff[child.name] = min(2 * delay, RESTART_MAX_SECS)
            self.restarts[child.name] = time.monotonic() + delay
            say(f"{said}\nspine up: restarting the {child.name} in {delay:g} s", sys.stderr)
            return
        running = ", ".join(c.name for c in self.children if c.process.poll() is None)
        say(f"{said}\nspine up: the {child.name} is not restarted; still running: {running or 'nothing'}", sys.stderr)

    def stop(self) -> bool:
        """Every child still running, in reverse start order; True when each stopped cleanly."""
        clean = True
        for child in reversed(self.children):
            if child.process.poll() is None:
                say(f"spine up: stopping the {child.name} (pid {child.process.pid})")
                if child.stop():
                    say(f"spine up: the {child.name} stopped")
                else:
                    clean = False
            elif not child.reported:  # exited while we were starting or stopping the others
                child.reported = self.failed = True
                say(f"spine up: the {child.name} had exited with {child.exited()}", sys.stderr)
        return clean


def _earlier_ended(directory: Path) -> bool:
    """Wait (bounded) until the processes an earlier ``spine up`` on ``directory`` left in
    ``up.pids`` have ended (they stop on its death); False, said, when one outlives the bound."""
    try:
        pids: dict[str, int] = json.loads((directory / "up.pids").read_text())
    except (OSError, ValueError):
        return True
    alive = {name: pid for name, pid in pids.items() if _is_spine(pid)}
    if alive:
        say(
            f"spine up: an earlier spine up on {directory} ended without stopping its processes; waiting for "
            + ", ".join(f"the {name} (pid {pid})" for name, pid in alive.items())
        )
    deadline = time.monotonic() + EARLIER_SECS
    while alive := {name: pid for name, pid in alive.items() if _is_spine(pid)}:
        if time.monotonic() > deadline:
            say(
                f"spine up: still running after {EARLIER_SECS:g} s: "
                + ", ".join(f"the {name} (pid {pid})" for name, pid in alive.items())
                + "; stop them (kill PID) and start again",
                sys.stderr,
            )
            return False
        time.sleep(POLL_SECS)
    (directory / "up.pids").unlink(missing_ok=True)
    return True


def _is_spine(pid: int) -> bool:
    """Whether ``pid`` is a running (not zombie) ``spine.cli`` process."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return b"spine.cli" in argv and state != "Z"


def imported_venues(imports: Path) -> list[str]:
    """The venues ``spine import`` wrote instruments of into ``imports`` (its catalog dir):
    the ``SYMBOL.VENUE`` directories of its definitions (``external/data/<kind>/``), read from
    the file tree alone (spine up loads no framework)."""
    data = imports / "external" / "data"
    venues = {
        entry.name.rpartition(".")[2]
        for kind in (data.iterdir() if data.is_dir() else ())
        if kind.is_dir() and kind.name != "bar"
        for entry in kind.iterdir()
        if entry.is_dir() and "." in entry.name
    }
    return sorted(venues)


def _catalog_node_env(directory: Path, venue: str, port: int) -> dict[str, str]:
    """A catalog-venue node serving ``venue``'s imports, its own data dir beside the others."""
    return {
        "SPINE_HOST": HOST,
        "SPINE_PORT": str(port),
        "SPINE_DATA_DIR": str(directory / "nodes" / venue),
        "SPINE_VENUE": "catalog",
        "SPINE_CATALOG_PATH": str(directory / "imports"),
        "SPINE_CATALOG_VENUE_NAME": venue,
    }


def run_up(data_dir: str | None, port: int, paper: bool = False) -> int:
    """Run the stack until SIGINT, SIGTERM or SIGHUP; 0 when every process started, ran and
    stopped cleanly, 1 when one failed, 3 when ``DIR`` or the gateway's port is in use."""
    directory = Path(data_dir or DEFAULT_DIR)
    directory.mkdir(parents=True, exist_ok=True)
    lock = open(directory / "up.lock", "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        say(f"spine up: another spine up runs on {directory} (it holds {directory / 'up.lock'})", sys.stderr)
        lock.close()
        return 3
    up_json = directory / "up.json"
    up_json.unlink(missing_ok=True)  # a waiter must never read an earlier run's file
    if not _earlier_ended(directory):
        lock.close()
        return 3
    if port and not _bindable(port):
        say(f"spine up: --port {port}: {HOST}:{port} is in use; pick another (0: any free port)", sys.stderr)
        lock.close()
        return 3
    taken = {port or _free_port(set())}
    gateway_port = next(iter(taken))
    ports: dict[str, int] = {}
    for name, preferred in PREFERRED.items():
        ports[name] = preferred if preferred not in taken and _bindable(preferred) else _free_port(taken)
        if ports[name] != preferred:
            say(f"spine up: port {preferred} is in use; the {name} takes {ports[name]}")
        taken.add(ports[name])
    # One catalog-venue node per venue `spine import` loaded, behind the gateway and the
    # screener like the simulated one (the simulated venue's own name is left to it).
    venues = [v for v in imported_venues(directory / "imports") if v != SIM_VENUE]
    if len(venues) >= MAX_NODES:
        venues = venues[: MAX_NODES - 1]
        say(f"spine up: more imported venues than nodes it runs; serving the first {len(venues)}: {', '.join(venues)}")
    for venue in venues:
        ports[f"node-{venue}"] = _free_port(taken)
        taken.add(ports[f"node-{venue}"])
    up = Up(directory)
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, up._signal)
    node, screener = f"http://{HOST}:{ports['node']}", f"http://{HOST}:{ports['screener']}"
    nodes = [node] + [f"http://{HOST}:{ports[f'node-{venue}']}" for venue in venues]
    node_flags = [flag for url in nodes for flag in ("--node", url)]
    mode = "private-operator" if os.environ.get("SPINE_DEPLOYMENT_MODE") == "private-operator" else "public-readonly"
    say(
        f"spine up: deployment mode {mode}"
        + (
            ""
            if mode == "private-operator"
            else " (reads only; SPINE_DEPLOYMENT_MODE=private-operator enables saving strategies and running backtests)"
        )
    )
    # The gateway's database: the workers take its jobs.
    database = f"sqlite:///{directory.resolve() / 'gateway' / 'spine.db'}"
    try:
        started = (
            up.start(
                "node",
                ports["node"],
                [],
                {
                    "SPINE_HOST": HOST,
                    "SPINE_PORT": str(ports["node"]),
                    "SPINE_DATA_DIR": str(directory / "node"),
                    # --paper: the simulated venue's node is a paper node (its sandbox account)
                    **({"SPINE_SANDBOX_ENABLED": "true"} if paper else {}),
                },
                "/v2/health",
                lambda health: health["ready"] is True,
            )
            and all(
                up.start(
                    f"node-{venue}",
                    ports[f"node-{venue}"],
                    [],
                    _catalog_node_env(directory, venue, ports[f"node-{venue}"]),
                    "/v2/health",
                    lambda health: health["ready"] is True,
                )
                for venue in venues
            )
            and up.start(
                "screener",
                ports["screener"],
                [*node_flags, "--port", str(ports["screener"]), "--data-dir", str(directory / "screener")],
                {"SPINE_SCREENER_HOST": HOST},
                "/v2/screener/health",
                lambda health: True,
            )
            and up.start(
                "gateway",
                gateway_port,
                [
                    *node_flags,
                    "--screener",
                    screener,
                    "--port",
                    str(gateway_port),
                    "--data-dir",
                    str(directory / "gateway"),
                    "--catalog",
                    str(directory / "imports"),
                ],
                {"SPINE_GATEWAY_HOST": HOST, "SPINE_GATEWAY_DATABASE": database},
                "/v2/health",
                lambda health: health["ready"] is True,
            )
            and up.start(
                "web",
                ports["web"],
                ["--gateway", f"http://{HOST}:{gateway_port}", "--port", str(ports["web"])],
                {"SPINE_WEB_HOST": HOST},
                "/api/mode",
                lambda mode: True,
            )
        )
        if started:
            # The workers read the node's catalogs and what `spine import` loaded (its default DIR).
            up.start_workers(
                os.cpu_count() or 1,
                [
                    "--database",
                    database,
                    "--catalog",
                    str(directory / "node" / "catalog"),
                    "--catalog",
                    str(directory / "imports"),
                ],
            )
            web = f"http://{HOST}:{ports['web']}/"
            urls = {"gateway": f"http://{HOST}:{gateway_port}", "nodes": nodes, "screener": screener, "web": web}
            temporary = directory / "up.json.tmp"
            temporary.write_text(json.dumps(urls, indent=2) + "\n")
            os.replace(temporary, up_json)
            say(
                f"spine up: the UI is {web}; the gateway is {urls['gateway']}; wrote {up_json}; "
                "Ctrl-C or SIGTERM stops everything"
            )
            gateway_flag = f"--gateway {urls['gateway']}"
            say(
                f"spine up: agents `spine tools {gateway_flag}`; "
                f"a terminal `spine client instruments-list {gateway_flag}`"
            )
            up.watch()
    finally:
        if up.signalled is not None:
            say(f"spine up: {signal.Signals(up.signalled).name}: stopping workers, web, gateway, screener, node")
        clean = up.stop()
        up_json.unlink(missing_ok=True)
        (directory / "up.pids").unlink(missing_ok=True)
        lock.close()
    ok = clean and not up.failed
    say(f"spine up: {'stopped cleanly' if ok else 'stopped; something failed (see above)'}")
    return 0 if ok else 1
