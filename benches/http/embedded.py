"""Granian embedded in a uvloop event loop, the way ``spine node`` serves (the node's loop is
uvloop: nautilus installs its policy), used by both Granian SSE servers so they differ only
in the app and its fan-out.

The backlog is raised from the embedded server's default of 128 because Granian derives its
backpressure (requests in flight per worker) from it: at 128, stream 129 would wait forever.
"""

from __future__ import annotations

import asyncio
import signal
from typing import Any

import uvloop
from granian.constants import Interfaces
from granian.log import LogLevels
from granian.server.embed import Server

from benches.http.procs import HOST

BACKLOG = 4_096


def serve(app: Any, interface: str, port: int, backlog: int = BACKLOG) -> None:
    """Serve ``app`` (``rsgi`` or ``asgi``) until SIGTERM or SIGINT."""
    uvloop.run(_serve(app, Interfaces(interface), port, backlog))


async def _serve(app: Any, interface: Interfaces, port: int, backlog: int) -> None:
    server = Server(app, address=HOST, port=port, interface=interface, log_level=LogLevels.warning, backlog=backlog)
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, server.stop)
    await server.serve()
