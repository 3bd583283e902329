"""``spine tools`` as a process, spoken to in raw JSON-RPC over its pipes: every line it writes
to stdout is a protocol message (logs and stray output go to stderr), it holds no listening
socket, it ends with exit 0 when its stdin closes, and a bad configuration exits 2 naming the
key before it reads anything."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from nodes import spine_cli

PROTOCOL = "2025-06-18"


def request(id: int, method: str, params: dict[str, Any] | None = None) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params or {}}) + "\n"


def listening_inodes() -> set[str]:
    """The socket inodes of every listening TCP socket on this host."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A":  # LISTEN
                inodes.add(fields[9])
    return inodes


def socket_inodes(pid: int) -> set[str]:
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    return inodes


def test_stdout_carries_only_the_protocol_and_the_process_listens_on_nothing() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "spine.cli", "tools", "--gateway", "http://127.0.0.1:9"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdin is not None and process.stdout is not None
        client_info = {"name": "raw", "version": "1"}
        process.stdin.write(
            request(1, "initialize", {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": client_info})
        )
        process.stdin.flush()
        initialized = json.loads(process.stdout.readline())
        assert initialized["id"] == 1 and initialized["result"]["serverInfo"]["name"] == "spine", initialized
        process.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        process.stdin.write(request(2, "tools/list"))
        process.stdin.write(request(3, "tools/call", {"name": "health_get", "arguments": {}}))
        process.stdin.flush()
        listed = json.loads(process.stdout.readline())
        called = json.loads(process.stdout.readline())
        assert listed["id"] == 2 and any(t["name"] == "bars_list" for t in listed["result"]["tools"])
        assert called["id"] == 3 and called["result"]["isError"] is True  # no gateway on port 9
        assert not socket_inodes(process.pid) & listening_inodes()
        rest, _ = process.communicate(timeout=60)  # closes stdin: the end of the session
        assert process.returncode == 0
        assert rest == ""  # nothing after the answers, not even at exit
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


def test_a_bad_configuration_exits_2_naming_the_key() -> None:
    done = spine_cli("tools", "--gateway", "ftp://127.0.0.1:8800", timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(
        "spine tools: tool server configuration: gateway: 'ftp://127.0.0.1:8800' is not a gateway base URL"
    ), done.stderr
