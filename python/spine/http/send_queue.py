"""How far behind a stream's client is: the bytes waiting in the kernel's send queue of its
connection (Linux ``SIOCOUTQ``).

Granian's RSGI stream transport takes every send at once and queues it without bound, so
nothing it offers tells a stream that its client stopped reading. The kernel knows: once the
client's receive window is full, what the server wrote piles up unsent. A ``SendQueue`` finds
the socket Granian accepted for a (server, client) address pair among this process's
descriptors, the first time it is asked (most streams never are), and reads that count with
one ioctl.

The descriptor stays Granian's: it is only queried, never closed (the socket object made to
read its addresses is detached at once). Where the socket cannot be found (another OS, a unix
socket, an unparsable address) the count reads as 0: the stream behaves as unprobed.
"""

from __future__ import annotations

import fcntl
import ipaddress
import os
import socket
import stat
import struct
import termios
from typing import Any

__all__ = ["SendQueue", "endpoint"]

_SIOCOUTQ = termios.TIOCOUTQ  # the same request number on Linux sockets
_FDS = "/proc/self/fd"
#: Descriptor -> (inode, local endpoint, peer endpoint) of the sockets open at the last scan,
#: and (local, peer) -> (descriptor, inode): a connection the last scan saw is found with one
#: fstat; a scan reads the addresses only of descriptors new or reused since the one before.
_seen: dict[int, tuple[int, Any, Any]] = {}
_by_ends: dict[tuple[Any, Any], tuple[int, int]] = {}


class SendQueue:
    """The unsent-byte count of the connection from ``client`` to ``server`` (each
    ``host:port``, IPv6 hosts optionally bracketed)."""

    __slots__ = ("client", "fd", "server")

    def __init__(self, server: str, client: str) -> None:
        self.server, self.client = server, client
        self.fd: int | None = None

    def unsent(self) -> int:
        """Bytes written but not yet taken by the peer; 0 when the socket is unknown or gone."""
        if self.fd is None:
            self.fd = locate(self.server, self.client)
            if self.fd is None:
                self.fd = -1  # looked once: not findable here
        if self.fd < 0:
            return 0
        try:
            return int(struct.unpack("i", fcntl.ioctl(self.fd, _SIOCOUTQ, b"\0\0\0\0"))[0])
        except OSError:
            return 0


def locate(server: str, client: str) -> int | None:
    """The descriptor of the socket whose local end is ``server`` and peer is ``client``."""
    try:
        wanted = (endpoint(server), endpoint(client))
    except ValueError:
        return None
    if (hit := _by_ends.get(wanted)) is None or _inode(hit[0]) != hit[1]:
        _rescan()
        hit = _by_ends.get(wanted)
    return hit[0] if hit is not None else None


def _rescan() -> None:
    """Rebuild both maps from the descriptors open now (addresses read only for new ones)."""
    global _seen, _by_ends
    try:
        names = os.listdir(_FDS)
    except OSError:
        return
    seen: dict[int, tuple[int, Any, Any]] = {}
    for name in names:
        fd = int(name)
        try:
            info = os.fstat(fd)
        except OSError:
            continue
        if stat.S_ISSOCK(info.st_mode):
            known = _seen.get(fd)
            seen[fd] = known if known is not None and known[0] == info.st_ino else (info.st_ino, *_ends(fd))
    _seen = seen
    _by_ends = {(local, peer): (fd, inode) for fd, (inode, local, peer) in seen.items() if peer is not None}


def _inode(fd: int) -> int | None:
    try:
        return os.fstat(fd).st_ino
    except OSError:
        return None


def _ends(fd: int) -> tuple[Any, Any]:
    """(local, peer) endpoints of socket ``fd``; None for what is not an IP socket."""
    if socket.getdefaulttimeout() is not None:
        return None, None  # wrapping a descriptor would then make it non-blocking: leave it be
    try:
        sock = socket.socket(fileno=fd)
    except OSError:
        return None, None
    try:
        if sock.family not in (socket.AF_INET, socket.AF_INET6):
            return None, None
        local, peer = sock.getsockname(), sock.getpeername()
        return (ipaddress.ip_address(local[0]), local[1]), (ipaddress.ip_address(peer[0]), peer[1])
    except OSError:
        return None, None
    finally:
        sock.detach()  # the descriptor is Granian's: never close it


def endpoint(text: str) -> tuple[Any, int]:
    """``host:port`` as (address, port); ValueError when it is not one."""
    host, _, port = text.rpartition(":")
    number = int(port)
    if not 0 <= number <= 65535:
        raise ValueError(f"port {number} out of range")
    return ipaddress.ip_address(host.strip("[]")), number
