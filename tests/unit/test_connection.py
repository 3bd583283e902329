"""The connection state, from the engine lifecycle and the data clients: every state, when
``since`` restarts, and what ``last_error`` reports."""

from __future__ import annotations

from dataclasses import dataclass

from spine.node.connection import ConnectionWatch
from spine.node.status import EngineStatusProducer


@dataclass
class Client:
    id: str
    is_connected: bool = False


def test_the_states_follow_the_lifecycle_and_the_clients() -> None:
    status, clients = EngineStatusProducer("run-1"), []
    watch = ConnectionWatch(status, clients)
    assert watch.look(1) == ("CONNECTING", None, [], None)  # nothing has started connecting
    clients.append(Client("SIM"))
    assert watch.look(2)[:2] == ("CONNECTING", 2)
    clients[0].is_connected = True
    assert watch.look(3) == ("CONNECTED", 3, [("SIM", True)], None)
    status.begin()
    assert watch.look(4)[:2] == ("CONNECTED", 3)  # the run beginning changes nothing here
    clients[0].is_connected = False
    assert watch.look(5) == ("DISCONNECTED", 5, [("SIM", False)], "data client SIM lost its connection")
    clients[0].is_connected = True
    assert watch.look(6) == ("CONNECTED", 6, [("SIM", True)], "data client SIM lost its connection")
    status.finish()
    assert watch.look(7)[:2] == ("STOPPED", 7)


def test_every_client_must_be_connected() -> None:
    clients = [Client("A", True), Client("B", False)]
    status = EngineStatusProducer("run-1")
    watch = ConnectionWatch(status, clients)
    assert watch.look(1).state == "CONNECTING"
    status.begin()
    assert watch.look(2).state == "DISCONNECTED"


def test_a_failed_engine_is_stopped_with_its_error() -> None:
    status = EngineStatusProducer("run-1")
    status.begin()
    status.fail("venue went away")
    snapshot = ConnectionWatch(status, [Client("SIM", True)]).look(1)
    assert (snapshot.state, snapshot.last_error) == ("STOPPED", "venue went away")
