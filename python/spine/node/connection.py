"""The node's connection to its venue as one state, read from the engine lifecycle and the data
clients' ``is_connected``:

    CONNECTING    the run has not begun and some data client is not connected (or none exists)
    CONNECTED     every data client is connected (at least one exists)
    DISCONNECTED  the run goes on, but some data client is not connected
    STOPPED       the run has ended (engine COMPLETED or FAILED)

Neither the framework nor the clients timestamp their connection changes, so ``since`` is when
this watch first saw the current state: the node makes it look every second and every read
looks too, so ``since`` is late by at most a second. It is None while no data client exists
(nothing has started connecting). ``last_error`` is the last failure seen: a client that was
connected and no longer is, or the engine's error once it FAILED.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Literal, NamedTuple

from spine.node.status import EngineStatusProducer

__all__ = ["ConnectionState", "ConnectionWatch", "Snapshot"]

ConnectionState = Literal["CONNECTED", "CONNECTING", "DISCONNECTED", "STOPPED"]


class Snapshot(NamedTuple):
    state: ConnectionState
    since: int | None
    clients: list[tuple[str, bool]]
    last_error: str | None


def _state(lifecycle: str, clients: list[tuple[str, bool]]) -> ConnectionState:
    if lifecycle in ("COMPLETED", "FAILED"):
        return "STOPPED"
    if clients and all(connected for _, connected in clients):
        return "CONNECTED"
    return "CONNECTING" if lifecycle == "STARTING" else "DISCONNECTED"


class ConnectionWatch:
    """See the module docs. ``clients`` is the node's own list (it grows as clients are built)."""

    def __init__(self, status: EngineStatusProducer, clients: list[Any]) -> None:
        self._status = status
        self._clients = clients
        self._seen: tuple[ConnectionState, bool] | None = None
        self._since: int | None = None
        self._connected: dict[str, bool] = {}
        self._last_error: str | None = None

    def look(self, now: int | None = None) -> Snapshot:
        """The current state; a change from the last look restarts ``since`` at ``now``."""
        now = time.time_ns() if now is None else now
        clients = [(str(client.id), bool(client.is_connected)) for client in self._clients]
        for client_id, connected in clients:
            if self._connected.get(client_id) and not connected:
                self._last_error = f"data client {client_id} lost its connection"
        self._connected = dict(clients)
        if self._status.lifecycle == "FAILED" and self._status.last_error:
            self._last_error = self._status.last_error
        state = _state(self._status.lifecycle, clients)
        # Whether a client exists is part of the key: "since" starts when connecting starts.
        if (state, bool(clients)) != self._seen:
            self._seen = (state, bool(clients))
            self._since = now if clients else None
        return Snapshot(state, self._since, clients, self._last_error)

    async def watch(self, interval: float = 1.0) -> None:
        """Look every ``interval`` seconds until cancelled (the node runs this)."""
        while True:
            self.look()
            await asyncio.sleep(interval)
