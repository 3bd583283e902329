"""A stream relayed per subscriber: a proxy opens the upstream's stream with the client's
query (and ``Last-Event-ID``) and pipes its bytes through as they come, whole frames at a time.

The gateway uses it where one shared subscription cannot serve every client: the screener's
stream starts each subscriber with its own ``row`` frames (then deltas against them), and a v1
stream resumes from the subscriber's own cursor in one node's journal. The web server's
same-origin proxy relays every stream with it. The upstream's refusal (its
status and envelope) is passed on as it answered; one it cannot reach is 502
UPSTREAM_UNAVAILABLE.

Heartbeats as on the gateway's other streams: after ``heartbeat_secs`` without a write, one is
sent between two frames (the upstream's own heartbeats pass through too). A client that stops
reading stops the relay reading the upstream (its send queue is probed as
:mod:`spine.http.streams` does), so the upstream holds the backlog and treats it as its own
slow client (the screener drops its oldest and ends the stream). When the upstream's stream
ends or fails, so does the client's: it reconnects (a v1 client with its last id)."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import httpx

from spine.http.errors import HttpError
from spine.http.send_queue import SendQueue
from spine.http.streams import BEHIND_BYTES, CHECK_BYTES, RETRY_MAX_SECS, RETRY_SECS, SSE, heartbeat
from spine.upstream_errors import plain_cause

__all__ = ["pipe"]

log = logging.getLogger("spine.http")
JSON = [("content-type", "application/json")]


async def pipe(
    proto: Any,
    client: httpx.AsyncClient,
    base_url: str,
    path: str,
    query: str,
    headers: dict[str, str],
    heartbeat_secs: float,
    wire_version: str,
    probe: SendQueue | None,
    name: str = "the upstream",
) -> None:
    """Relay ``GET base_url+path?query`` to the client of ``proto`` until either side ends; a
    refusal names the upstream by ``name`` (its address goes to the log)."""
    what = f"GET {path}"
    request = client.build_request(
        "GET", base_url + path + (f"?{query}" if query else ""), headers={"accept": "text/event-stream", **headers}
    )
    try:
        response = await client.send(request, stream=True)
    except httpx.HTTPError as error:
        log.warning("%s (%s): %s: %s: %s", name, base_url, what, type(error).__name__, error)
        raise HttpError("UPSTREAM_UNAVAILABLE", f"{name}: {what}: {plain_cause(error)}") from None
    try:
        if response.status_code != 200 or not response.headers.get("content-type", "").startswith("text/event-stream"):
            proto.response_bytes(response.status_code, JSON, await response.aread())
            return
        await _relay(proto.response_stream(200, SSE), proto, response, heartbeat_secs, wire_version, probe)
    except httpx.HTTPError as error:  # the upstream failed mid-stream: the client's stream ends
        log.info("%s: %s ended: %s: %s", base_url, what, type(error).__name__, error)
    finally:
        await response.aclose()


async def _relay(
    transport: Any,
    proto: Any,
    response: httpx.Response,
    heartbeat_secs: float,
    wire_version: str,
    probe: SendQueue | None,
) -> None:
    disconnected = asyncio.ensure_future(proto.client_disconnect())
    chunks = response.aiter_raw()
    reading: asyncio.Future[bytes] | None = None
    rest, last, handed = b"", time.monotonic(), 0
    try:
        while not disconnected.done():
            if reading is None:
                reading = asyncio.ensure_future(anext(chunks))
            quiet = time.monotonic() - last
            if quiet >= heartbeat_secs:
                if not rest:  # between frames only
                    if not await _send(transport, heartbeat(wire_version)):
                        return
                    last = time.monotonic()
                    continue
                quiet = 0.0
            await asyncio.wait(
                (reading, disconnected), timeout=heartbeat_secs - quiet, return_when=asyncio.FIRST_COMPLETED
            )
            if not reading.done():
                continue
            done, reading = reading, None
            try:
                chunk = done.result()  # an upstream failure propagates (see pipe)
            except StopAsyncIteration:
                # The upstream ended. The client's transport must go with this frame: its end
                # ends the response, and the finished read (its exception's traceback holds
                # this frame) must not keep it alive in a cycle.
                del done
                return
            data = rest + chunk if rest else chunk
            cut = data.rfind(b"\n\n") + 2
            if cut < 2:
                rest = data
                continue
            rest = data[cut:]
            if not await _send(transport, data[:cut]):
                return
            last, handed = time.monotonic(), handed + cut
            if probe is not None and handed >= CHECK_BYTES:
                handed = 0
                await _keep_up(probe, disconnected)
    finally:
        disconnected.cancel()
        if reading is not None:
            reading.cancel()


async def _send(transport: Any, data: bytes) -> bool:
    """Whether the client's transport took ``data`` (False: the client went away)."""
    try:
        await transport.send_bytes(data)
    except Exception:  # noqa: BLE001 - the client went away mid-send
        log.debug("a relayed stream's send failed; it is ended", exc_info=True)
        return False
    return True


async def _keep_up(probe: SendQueue, disconnected: asyncio.Future[None]) -> None:
    """Wait while the client is behind (no upstream read meanwhile), backing off as a held
    hub stream does."""
    retry = RETRY_SECS
    while not disconnected.done() and probe.unsent() >= BEHIND_BYTES:
        await asyncio.wait((disconnected,), timeout=retry)
        retry = min(2 * retry, RETRY_MAX_SECS)
