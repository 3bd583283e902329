"""The send-queue probe finds the very socket accepted for a (server, client) pair and reads
its unsent bytes, which grow once the client stops reading (a real loopback connection); the
descriptor is only read, never closed."""

from __future__ import annotations

import os
import socket

import pytest

from spine.http.send_queue import SendQueue, endpoint, locate


def _pair(family: int, host: str) -> tuple[socket.socket, socket.socket, socket.socket]:
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.bind((host, 0))
    listener.listen()
    client = socket.create_connection(listener.getsockname()[:2])
    accepted, _ = listener.accept()
    return listener, client, accepted


def _text(address: tuple) -> str:  # type: ignore[type-arg]
    host, port = address[:2]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


@pytest.mark.parametrize(("family", "host"), [(socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")])
def test_the_accepted_socket_is_found_and_its_unsent_bytes_grow_while_the_client_does_not_read(
    family: int, host: str
) -> None:
    try:
        listener, client, accepted = _pair(family, host)
    except OSError:
        pytest.skip(f"no {host} loopback here")
    with listener, client, accepted:
        server_end, client_end = _text(accepted.getsockname()), _text(accepted.getpeername())
        assert locate(server_end, client_end) == accepted.fileno()
        assert locate(client_end, server_end) == client.fileno()  # the other end is its own socket
        probe = SendQueue(server_end, client_end)
        assert probe.unsent() == 0
        accepted.setblocking(False)
        written = 0
        try:
            while written < 64 * 1024 * 1024:
                written += accepted.send(b"x" * 65536)
        except BlockingIOError:
            pass
        assert probe.unsent() > 0  # the client's window is full: the rest waits unsent
        os.fstat(accepted.fileno())  # still open: finding it closed nothing


def test_an_unknown_pair_or_an_unparsable_address_reads_as_nothing_unsent() -> None:
    assert locate("127.0.0.1:1", "127.0.0.1:2") is None
    for server in ("127.0.0.1:1", "not-an-address:1", "127.0.0.1:http", "127.0.0.1:70000"):
        assert SendQueue(server, "127.0.0.1:2").unsent() == 0


def test_a_gone_socket_reads_as_nothing_unsent() -> None:
    listener, client, accepted = _pair(socket.AF_INET, "127.0.0.1")
    with listener, client:
        probe = SendQueue(_text(accepted.getsockname()), _text(accepted.getpeername()))
        assert probe.unsent() == 0 and probe.fd == accepted.fileno()
        accepted.close()
        assert probe.unsent() == 0


def test_endpoints_parse_both_address_families() -> None:
    assert endpoint("127.0.0.1:8080")[1] == 8080
    assert str(endpoint("[::1]:80")[0]) == "::1"
    for bad in ("localhost:80", "127.0.0.1:-1", "127.0.0.1:65536", "127.0.0.1"):
        with pytest.raises(ValueError):
            endpoint(bad)


def test_with_a_default_socket_timeout_set_nothing_is_wrapped_or_found() -> None:
    listener, client, accepted = _pair(socket.AF_INET, "127.0.0.1")
    previous = socket.getdefaulttimeout()
    socket.setdefaulttimeout(5.0)
    try:
        with listener, client, accepted:
            accepted.setblocking(True)
            assert locate(_text(accepted.getsockname()), _text(accepted.getpeername())) is None
            assert accepted.getblocking()  # untouched
    finally:
        socket.setdefaulttimeout(previous)
