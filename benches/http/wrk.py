"""wrk on loopback: one thread, a fixed number of connections, the latency distribution; its
text report parsed into requests/s and p50/p99 in milliseconds."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

UNITS_MS = {"us": 1e-3, "ms": 1.0, "s": 1e3}
_RPS = re.compile(r"^Requests/sec:\s+([0-9.]+)", re.M)
_PCT = re.compile(r"^\s+(50|99)%\s+([0-9.]+)(us|ms|s)\s*$", re.M)
_ERRORS = re.compile(r"(Non-2xx or 3xx responses: \d+|Socket errors: [^\n]+)")


class WrkMissing(RuntimeError):
    """wrk is not installed (scripts/setup.sh installs it when run as root)."""


def require() -> str:
    path = shutil.which("wrk")
    if path is None:
        raise WrkMissing("wrk is not on PATH: run scripts/setup.sh as root, or `apt-get install wrk`")
    return path


def run(url: str, seconds: float, connections: int = 32, script: Path | None = None) -> dict[str, float | str | None]:
    """One wrk run: ``rps``, ``p50_ms``, ``p99_ms`` and ``errors`` (None when clean);
    ``script``: a Lua script (a POST's method, body and headers)."""
    argv = [
        require(),
        "-t1",
        f"-c{connections}",
        f"-d{seconds:g}s",
        "--latency",
        *(["-s", str(script)] if script else []),
        url,
    ]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 30, check=True).stdout
    return parse(out)


def parse(report: str) -> dict[str, float | str | None]:
    rps = _RPS.search(report)
    if rps is None:
        raise ValueError(f"no Requests/sec in wrk output:\n{report}")
    pct = {m[1]: float(m[2]) * UNITS_MS[m[3]] for m in _PCT.finditer(report)}
    errors = "; ".join(_ERRORS.findall(report)) or None
    return {"rps": float(rps[1]), "p50_ms": pct.get("50"), "p99_ms": pct.get("99"), "errors": errors}
