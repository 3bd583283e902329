"""Serving an app on Granian embedded in the process's own event loop (on a GIL build the one
mode that shares the process's memory), and the check that its address is free."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import sys
from collections.abc import Awaitable, Callable
from typing import Any, NoReturn, TypeVar

from spine.settings import ConfigError, ServerSettings

__all__ = ["check_listen", "embedded_server", "run_until_signalled", "start_config"]

S = TypeVar("S", bound=ServerSettings)


def embedded_server(app: Any, *, host: str, port: int, backlog: int) -> Any:
    """A Granian RSGI server for ``app`` on ``host:port``; ``await server.serve()`` runs it in
    the running loop, ``server.stop()`` ends it."""
    from granian.constants import Interfaces
    from granian.log import LogLevels
    from granian.server.embed import Server

    # The contract has no WebSocket protocol. With Granian's websockets on, an upgrade request
    # never reaches the app and the transport refuses it with a bodiless 403; off, it is an
    # ordinary GET that the app answers with a wire document or the error envelope.
    server = Server(
        app,
        address=host,
        port=port,
        interface=Interfaces.RSGI,
        log_level=LogLevels.warning,
        backlog=backlog,
        websockets=False,
    )
    logging.getLogger("_granian").addFilter(_embedded_notice)
    return server


def _embedded_notice(record: logging.LogRecord) -> bool:
    """Drop Granian's notice that embedding is experimental: a known, chosen trade
    (docs/contract.md), not news for every start."""
    return record.getMessage() != "Embedded server is experimental!"


def check_listen(host: str, port: int) -> None:
    """Raise OSError unless ``host:port`` can be bound now (as Granian binds it, with
    SO_REUSEADDR: a socket in TIME_WAIT from a previous run does not count, a listener does)."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[
        0
    ]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind(address)


def start_config(command: str, load: Callable[[], S]) -> S | int:
    """A process's configuration once it can start, or its exit code: 2 for a configuration
    refused, 3 for an address it cannot listen on (both printed, naming what was wrong)."""
    try:
        config = load()
    except ConfigError as error:
        print(f"{command}: {error}", file=sys.stderr)
        return 2
    try:
        check_listen(config.host, config.port)
    except OSError as error:
        print(
            f"{command}: refusing to start: cannot listen on {config.host}:{config.port}: {error.strerror or error}",
            file=sys.stderr,
        )
        return 3
    return config


def run_until_signalled(command: str, serve: Callable[[asyncio.Event], Awaitable[None]]) -> NoReturn:
    """Run ``serve`` until SIGINT or SIGTERM sets its stop event, then leave with 0. Leaving
    skips interpreter teardown: a native server thread finishing late there can abort the
    process (seen under load), and a clean stop must exit 0."""

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        await serve(stop)

    asyncio.run(main())
    print(f"{command}: stopped", flush=True)
    sys.stderr.flush()
    os._exit(0)
