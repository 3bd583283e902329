"""Every server of the benchmarks as a command line (one process, one worker each, loopback)
plus the path that answers 200 once it is ready; ``started`` runs a set of them side by side."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from benches.http.procs import HOST, free_port, python, serving


@dataclass(frozen=True)
class Spec:
    name: str
    argv: Callable[[int], list[str]]
    ready: str


def uvicorn_argv(app: str) -> Callable[[int], list[str]]:
    """The command line of uvicorn serving ``app`` on a port (one worker, uvloop, httptools)."""
    return lambda port: python(
        "-m",
        "uvicorn",
        app,
        "--host",
        HOST,
        "--port",
        str(port),
        "--loop",
        "uvloop",
        "--http",
        "httptools",
        "--log-level",
        "warning",
        "--no-access-log",
    )


def _granian_rsgi(app: str) -> Callable[[int], list[str]]:
    return lambda port: python(
        "-m",
        "granian",
        "--interface",
        "rsgi",
        "--host",
        HOST,
        "--port",
        str(port),
        "--workers",
        "1",
        "--loop",
        "uvloop",
        "--log-level",
        "warning",
        app,
    )


def _module(name: str) -> Callable[[int], list[str]]:
    return lambda port: python("-m", name, str(port))


#: The request/response rivals, serving the pre-built pages (``SPINE_BENCH_DOCS``).
HTTP_RIVALS = (
    Spec("fastapi", uvicorn_argv("benches.http.fastapi_app:app"), "/v2/health"),
    Spec("starlette+orjson", uvicorn_argv("benches.http.starlette_app:app"), "/v2/health"),
)
#: The /v2/health reference: a bare Granian RSGI app answering a constant.
HEALTH_REFERENCE = Spec("granian-const", _granian_rsgi("benches.http.const_app:app"), "/v2/health")
#: The SSE fan-out servers: Spine first.
SSE_SERVERS = (
    Spec("spine", _module("benches.http.sse_spine"), "/bench/subscribers"),
    Spec("starlette-granian", _module("benches.http.sse_rivals"), "/bench/subscribers"),
    Spec("sse-starlette", uvicorn_argv("benches.http.sse_rivals:sse_starlette_app"), "/bench/subscribers"),
)


@contextlib.contextmanager
def started(specs: Sequence[Spec], work: Path, env: dict[str, str]) -> Iterator[dict[str, str]]:
    """Each server's base URL, all running until the block ends (then all stopped)."""
    with contextlib.ExitStack() as stack:
        bases = {}
        for spec in specs:
            port = free_port()
            base = f"http://{HOST}:{port}"
            stack.enter_context(serving(spec.name, spec.argv(port), base + spec.ready, work, env=env))
            bases[spec.name] = base
        yield bases
