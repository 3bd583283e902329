"""One venue node as the screener reads it, over HTTP: its instruments (``/v2/instruments``),
an instrument's durable 1-minute bars (``/v2/bars`` pages, oldest first) and its live
1-minute closes (``/v2/stream/bars``). Every failure is an :class:`UpstreamError` naming the
node, the request and the cause; nothing here retries (the caller backs off).

Requests share the caller's pooled ``httpx.AsyncClient`` (its timeouts bound every call).
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any

import httpx
import numpy as np
import numpy.typing as npt
from httpx_sse import aconnect_sse

from spine._core import parse_decimal_column, parse_timestamp_column
from spine.upstream_errors import UpstreamError, plain_cause
from spine.wire.bar_types import bar_type_of

__all__ = ["BAR_PAGE", "Bars", "NodeClient", "UpstreamError", "bar_columns"]

log = logging.getLogger("spine.screener")

#: Bars per page read while warming: the node's largest page.
BAR_PAGE = 5_000
#: Instruments per page of ``/v2/instruments``.
INSTRUMENT_PAGE = 1_000
#: A bar page's columns: ``ts_event`` as uint64 nanoseconds, prices and volumes as int64
#: mantissas at the instrument's precisions, ``sequence`` as uint64.
Bars = dict[str, npt.NDArray[Any]]


class NodeClient:
    """Reads of one node at ``base_url`` through ``client``; public texts (its errors, the
    health's connection entries) call it ``name`` (``node-1``.., configuration order), never
    by its address, which goes to the log with the client's error."""

    def __init__(self, base_url: str, client: httpx.AsyncClient, name: str = "node-1") -> None:
        self.base_url = base_url.rstrip("/")
        self.name = name
        self._client = client

    def _failed(self, request: str, error: httpx.HTTPError) -> UpstreamError:
        log.warning("%s (%s): %s: %s: %s", self.name, self.base_url, request, type(error).__name__, error)
        return UpstreamError(self.name, request, plain_cause(error))

    async def get(self, path: str, params: dict[str, str | int] | None = None) -> dict[str, Any]:
        """The JSON document at ``path``; anything but a 200 with a JSON object fails."""
        request = f"GET {path}"
        try:
            response = await self._client.get(self.base_url + path, params=params)
        except httpx.HTTPError as error:
            raise self._failed(request, error) from error
        try:
            document = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise UpstreamError(self.name, request, f"HTTP {response.status_code}, not JSON") from None
        if response.status_code != 200 or not isinstance(document, dict):
            detail = document.get("error", {}).get("detail") if isinstance(document, dict) else None
            raise UpstreamError(self.name, request, f"HTTP {response.status_code}: {detail or 'no detail'}")
        return document

    async def instruments(self) -> list[dict[str, Any]]:
        """Every instrument the node lists (``svc.instrument_ref``), by id."""
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            params: dict[str, str | int] = {"limit": INSTRUMENT_PAGE}
            if cursor is not None:
                params["cursor"] = cursor
            page = await self.get("/v2/instruments", params)
            items.extend(page["items"])
            cursor = page["next_cursor"]
            if cursor is None:
                return items

    async def bar_pages(
        self, instrument: dict[str, Any], channel: str, after_sequence: int | None = None, end: int | None = None
    ) -> AsyncIterator[tuple[Bars, dict[str, Any]]]:
        """The instrument's durable 1-minute bars on ``channel``, oldest first, a page at a
        time (only those above ``after_sequence`` and closing at or before ``end`` when given:
        the node's ``end`` is inclusive), each with the page's coverage (the whole series')."""
        iid = instrument["instrument_id"]
        params: dict[str, str | int] = {"bar_type": bar_type_of(iid, "1m", channel), "limit": BAR_PAGE}
        if after_sequence is not None:
            params["after_sequence"] = after_sequence
        if end is not None:
            params["end"] = end
        while True:
            page = await self.get("/v2/bars", params)
            yield (
                bar_columns(page["bars"], instrument["price_precision"], instrument["size_precision"]),
                page["coverage"],
            )
            if page["next_cursor"] is None:
                return
            params["cursor"] = page["next_cursor"]

    async def closes(self, channel: str, on_open: Callable[[], None] | None = None) -> AsyncIterator[dict[str, Any]]:
        """The node's live 1-minute closes on ``channel`` (``svc.bar_envelope`` events, one bar
        each) until the stream ends or fails; heartbeats are skipped. ``on_open`` is called
        once the node has accepted the stream."""
        async with contextlib.aclosing(self.close_payloads(channel, on_open)) as payloads:
            async for payload in payloads:
                yield json.loads(payload.decode())

    async def close_payloads(
        self, channel: str, on_open: Callable[[], None] | None = None
    ) -> AsyncGenerator[bytes, None]:
        """:meth:`closes` as their raw ``data`` payloads (UTF-8), not decoded."""
        request = f"GET /v2/stream/bars?resolution=1m&channel={channel}"
        try:
            async with aconnect_sse(
                self._client,
                "GET",
                self.base_url + "/v2/stream/bars",
                params={"resolution": "1m", "channel": channel},
                timeout=httpx.Timeout(None, connect=self._client.timeout.connect),
            ) as source:
                if source.response.status_code != 200:
                    raise UpstreamError(self.name, request, f"HTTP {source.response.status_code}")
                if on_open is not None:
                    on_open()
                async for event in source.aiter_sse():
                    if event.event == "bar":
                        yield event.data.encode()
        except httpx.HTTPError as error:
            raise self._failed(request, error) from error


def bar_columns(rows: list[dict[str, Any]], price_precision: int, size_precision: int) -> Bars:
    """Wire bar rows as columns (exact: decimal strings to mantissas, never through floats)."""
    prices = {
        name: np.frombuffer(parse_decimal_column([row[name] for row in rows], price_precision), dtype="<i8")
        for name in ("open", "high", "low", "close")
    }
    return {
        "ts_event": np.frombuffer(parse_timestamp_column([row["ts_event"] for row in rows]), dtype="<u8"),
        **prices,
        "volume": np.frombuffer(parse_decimal_column([row["volume"] for row in rows], size_precision), dtype="<i8"),
        "sequence": np.array([row["sequence"] for row in rows], dtype="<u8"),
    }
