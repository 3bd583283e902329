"""One tool's call over HTTP to the gateway, shared by the tool server, the commands and the
Python client: the arguments are checked against the tool (size, floats, names), turned into a
request, and the gateway's answer comes back as its bytes, unchanged. A stream-backed tool
reads a bounded batch of events."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote

import httpx
from httpx_sse import SSEError, aconnect_sse

from spine.client.errors import ArgumentError, GatewayUnreachable
from spine.client.table import (
    BATCH_EVENTS,
    BATCH_SECONDS,
    MAX_ARGUMENT_BYTES,
    MAX_BATCH_EVENTS,
    MAX_BATCH_SECONDS,
    Tool,
)

__all__ = ["DEFAULT_GATEWAY", "Answer", "Batch", "Event", "Gateway", "check_arguments"]

DEFAULT_GATEWAY = "http://127.0.0.1:8800"


@dataclass(frozen=True)
class Answer:
    """The gateway's answer: its status and its body, as it came."""

    status: int
    body: bytes

    @property
    def ok(self) -> bool:
        return self.status < 400


@dataclass(frozen=True)
class Event:
    event: str
    data: str


@dataclass(frozen=True)
class Batch:
    """A bounded read of a stream: its events and why the read ended (``count``: max_events
    reached; ``seconds``: the time ran out; ``closed``: the gateway ended the stream)."""

    events: tuple[Event, ...]
    ended: Literal["count", "seconds", "closed"]


def check_arguments(tool: Tool, arguments: Mapping[str, Any]) -> None:
    """Refuse what the gateway would never see: an oversized or float-bearing arguments object,
    an unknown or missing argument, a parameter that is not a string or an integer."""
    size = len(json.dumps(arguments, separators=(",", ":"), ensure_ascii=False).encode())
    if size > MAX_ARGUMENT_BYTES:
        raise ArgumentError(f"{tool.name}: the arguments are {size} bytes serialised; at most {MAX_ARGUMENT_BYTES}")
    if (where := _float_at(arguments, "")) is not None:
        raise ArgumentError(
            f'{tool.name}: {where.lstrip(".")} is a float; decimals and timestamps are strings ("1.5"), never floats'
        )
    unknown = sorted(set(arguments) - set(tool.arguments))
    if unknown:
        raise ArgumentError(f"{tool.name}: unknown arguments {unknown}; allowed {list(tool.arguments)}")
    missing = [name for name in tool.required if arguments.get(name) is None]
    if missing:
        raise ArgumentError(f"{tool.name}: missing arguments {missing}")
    for name in (*tool.path_params, *tool.query_params):
        value = arguments.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, str | int)):
            raise ArgumentError(f"{tool.name}: {name} must be a string or an integer, not {type(value).__name__}")
    if tool.body and not isinstance(arguments["body"], dict):
        raise ArgumentError(f"{tool.name}: body must be a JSON object")


def _float_at(value: Any, where: str) -> str | None:
    if isinstance(value, float):
        return where or "the value"
    if isinstance(value, Mapping):
        items: Any = value.items()
    elif isinstance(value, list | tuple):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = _float_at(item, f"{where}.{key}" if isinstance(key, str) else f"{where}[{key}]")
        if found is not None:
            return found
    return None


def _bound(arguments: Mapping[str, Any], name: str, default: int, most: int) -> int:
    value = arguments.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
        raise ArgumentError(f"{name} must be an integer from 1 to {most}, not {value!r}")
    return value


class Gateway:
    """The gateway at ``base_url``, over one pooled HTTP client."""

    def __init__(self, base_url: str = DEFAULT_GATEWAY, timeout: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        self._http = httpx.Client(base_url=self.base_url, timeout=timeout)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Gateway:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def call(self, tool: Tool, arguments: Mapping[str, Any]) -> Answer:
        """A query or command tool: the gateway's answer, whatever its status."""
        check_arguments(tool, arguments)
        path, query = _request(tool, arguments)
        body = json.dumps(arguments["body"], ensure_ascii=False).encode() if tool.body else None
        headers = {"content-type": "application/json"} if body is not None else None
        try:
            response = self._http.request(tool.method, path, params=query, content=body, headers=headers)
        except httpx.HTTPError as error:
            raise GatewayUnreachable(f"the gateway at {self.base_url} did not answer: {error}") from None
        return Answer(response.status_code, response.content)

    def batch(self, tool: Tool, arguments: Mapping[str, Any]) -> Batch | Answer:
        """:meth:`abatch` for synchronous callers (a notebook's running loop included)."""
        check_arguments(tool, arguments)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.abatch(tool, arguments))
        with ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, self.abatch(tool, arguments)).result()

    async def abatch(self, tool: Tool, arguments: Mapping[str, Any]) -> Batch | Answer:
        """A stream tool: a bounded batch of its events, or the gateway's refusal. The read
        ends at ``max_events`` events or when ``seconds`` have passed, whichever is first."""
        check_arguments(tool, arguments)
        most = _bound(arguments, "max_events", BATCH_EVENTS, MAX_BATCH_EVENTS)
        seconds = _bound(arguments, "seconds", BATCH_SECONDS, MAX_BATCH_SECONDS)
        path, query = _request(tool, arguments)
        events: list[Event] = []
        try:
            async with httpx.AsyncClient(base_url=self.base_url, timeout=httpx.Timeout(10.0, read=None)) as http:
                async with asyncio.timeout(seconds):
                    async with aconnect_sse(http, "GET", path, params=query) as source:
                        if source.response.status_code >= 400:
                            return Answer(source.response.status_code, await source.response.aread())
                        async for sse in source.aiter_sse():
                            if sse.event != "heartbeat":
                                events.append(Event(sse.event, sse.data))
                            if len(events) >= most:
                                return Batch(tuple(events), "count")
        except TimeoutError:
            return Batch(tuple(events), "seconds")
        except (httpx.HTTPError, SSEError) as error:
            if events:  # the stream was cut after these: what was read is kept
                return Batch(tuple(events), "closed")
            raise GatewayUnreachable(f"the gateway at {self.base_url} did not answer: {error}") from None
        return Batch(tuple(events), "closed")


def _request(tool: Tool, arguments: Mapping[str, Any]) -> tuple[str, dict[str, str]]:
    """The request's path (placeholders filled, percent-encoded; a file path keeps its slashes)
    and its query."""
    path = tool.path
    for name in tool.path_params:
        path = path.replace("{" + name + "}", quote(str(arguments[name]), safe="/" if name == "path" else ""))
    query = {name: str(arguments[name]) for name in tool.query_params if arguments.get(name) is not None}
    return path, query
