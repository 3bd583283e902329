"""The gateway's upstreams: every venue node and the screener, reached through one pooled HTTP
client with timeouts (a hung upstream fails its own requests, never the others').

Each upstream's reachability and last error are refreshed every ``refresh_secs`` and on every
request; a node's venues are learned from its instruments, so a route naming an instrument
goes to the node of its venue. A route naming an instrument no node lists looks again, but at
most once per :data:`MISS_REFRESH_SECS` per upstream (a client naming unknown ids must not
make the gateway re-read every node per request), and a look in flight is shared.

Public texts name an upstream by its :attr:`Upstream.name` (``node-1``.. in configuration
order, ``screener``) and a failure by a plain cause; its address and the client's exception
go to the log only."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import aiohttp
import msgspec
import yarl

from spine.upstream_errors import UpstreamError, plain_cause

__all__ = ["MISS_REFRESH_SECS", "Upstream", "Upstreams", "passed_headers", "plain_cause"]

log = logging.getLogger("spine.gateway")
Kind = Literal["node", "screener"]
_decode = msgspec.json.decode
_JSON = {"content-type": "application/json"}
#: An upstream is read again for an unknown instrument at most this often (seconds).
MISS_REFRESH_SECS = 1.0
#: The response headers of an upstream's answer the gateway passes on with it.
PASSED_HEADERS = ("retry-after",)


@dataclass
class Upstream:
    """One upstream process and what the gateway knows of it."""

    kind: Kind
    base_url: str
    #: How public texts name it: ``node-<n>`` (1-based, configuration order) or ``screener``.
    name: str = ""
    #: None until first asked; then whether the last request reached it.
    reachable: bool | None = None
    last_error: str | None = None
    #: When it was last reached (ns), None before.
    last_seen: int | None = None
    #: The venues of its instruments (nodes).
    venues: set[str] = field(default_factory=set)
    #: Its instruments (nodes), as last read.
    instruments: frozenset[str] = frozenset()
    #: Its instruments' size precisions (``svc.instrument_ref``), read with them: a submit
    #: checks a quantity against them without asking the node.
    size_precisions: dict[str, int | None] = field(default_factory=dict)
    #: Its ``/v2/registry`` operations by id, as last read.
    registry: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: The look in flight (shared by whoever asks meanwhile), and when the last one ended
    #: (monotonic seconds).
    looking: asyncio.Future[None] | None = field(default=None, repr=False)
    looked_at: float | None = None

    def status(self, operator: bool = False) -> dict[str, Any]:
        """Its ``svc.gateway_status`` entry (less ``streams``); its address only for an
        operator (a private-operator gateway)."""
        address = {"base_url": self.base_url} if operator else {}
        return {
            "kind": self.kind,
            "name": self.name,
            **address,
            "reachable": bool(self.reachable),
            "last_error": self.last_error,
            "last_seen": None if self.last_seen is None else str(self.last_seen),
            "venues": sorted(self.venues),
        }


class Upstreams:
    """Every upstream and the one client they share."""

    def __init__(self, nodes: list[str], screener: str | None, timeout_secs: float) -> None:
        self.nodes = [Upstream("node", url.rstrip("/"), f"node-{n}") for n, url in enumerate(nodes, 1)]
        self.screener = None if screener is None else Upstream("screener", screener.rstrip("/"), "screener")
        self._timeout = aiohttp.ClientTimeout(total=timeout_secs)
        self._limit = 64 * (len(nodes) + 1)
        self._session: aiohttp.ClientSession | None = None

    @property
    def session(self) -> aiohttp.ClientSession:
        """The pooled session (made in the running loop on first use)."""
        if self._session is None:
            self._session = aiohttp.ClientSession(
                timeout=self._timeout,
                connector=aiohttp.TCPConnector(limit=self._limit, limit_per_host=64),
                skip_auto_headers=("User-Agent",),
                auto_decompress=False,
            )
        return self._session

    @property
    def all(self) -> list[Upstream]:
        return self.nodes + ([self.screener] if self.screener is not None else [])

    async def request(
        self, upstream: Upstream, method: str, path: str, query: str = "", body: bytes | None = None
    ) -> tuple[int, bytes]:
        """``method path?query`` on ``upstream``: its status and body bytes as they came (any
        status), or :class:`UpstreamError` when it cannot be reached or answers no JSON."""
        status, content, _ = await self.exchange(upstream, method, path, query, body)
        return status, content

    async def exchange(
        self, upstream: Upstream, method: str, path: str, query: str = "", body: bytes | None = None
    ) -> tuple[int, bytes, tuple[tuple[str, str], ...]]:
        """:meth:`request`, with the answer's headers the gateway passes on."""
        url = upstream.base_url + path + (f"?{query}" if query else "")
        what = f"{method} {path}"
        try:
            # Sent as encoded: the relay encodes each path parameter (a ``%2E%2E`` segment
            # normalised back to ``..`` would be resolved away).
            async with self.session.request(
                method, yarl.URL(url, encoded=True), data=body, headers=_JSON if body is not None else None
            ) as response:
                content = await response.read()
                status, kind = response.status, response.headers.get("content-type", "")
                headers = passed_headers(response.headers)
        except (aiohttp.ClientError, TimeoutError) as error:
            raise _failure(upstream, what, plain_cause(error), f"{type(error).__name__}: {error}") from error
        if not kind.startswith("application/json"):
            raise _failure(upstream, what, f"HTTP {status}, not JSON")
        upstream.reachable, upstream.last_seen = True, time.time_ns()
        return status, content, headers

    async def document(self, upstream: Upstream, path: str, query: str = "") -> dict[str, Any]:
        """The 200 JSON object at ``path``, or :class:`UpstreamError`."""
        status, body = await self.request(upstream, "GET", path, query)
        document = _decode(body)
        if status != 200 or not isinstance(document, dict):
            raise UpstreamError(upstream.name, f"GET {path}", f"HTTP {status}")
        return document

    async def refresh(self, within: float = 0.0) -> None:
        """Look at every upstream once: reachability, registry, and a node's venues; an upstream
        whose last look ended less than ``within`` seconds ago is left as it is, and one being
        looked at is waited for, not asked twice."""
        await asyncio.gather(*(self._shared_look(upstream, within) for upstream in self.all), return_exceptions=True)

    async def _shared_look(self, upstream: Upstream, within: float) -> None:
        if upstream.looking is None:
            if upstream.looked_at is not None and time.monotonic() - upstream.looked_at < within:
                return
            look = upstream.looking = asyncio.ensure_future(self._look(upstream))
            look.add_done_callback(lambda done: _looked(upstream, done))
        # Shielded: a waiter cancelled (its client gone) leaves the look to the others.
        await asyncio.shield(upstream.looking)

    async def _look(self, upstream: Upstream) -> None:
        registry = await self.document(upstream, "/v2/registry")
        upstream.registry = {op["id"]: op for op in registry["operations"]}
        if upstream.kind == "node":
            precisions: dict[str, int | None] = {}
            cursor = None
            while True:
                page = await self.document(
                    upstream, "/v2/instruments", "limit=1000" + ("" if cursor is None else f"&cursor={cursor}")
                )
                precisions.update((item["instrument_id"], item.get("size_precision")) for item in page["items"])
                cursor = page["next_cursor"]
                if cursor is None:
                    break
            instruments = set(precisions)
            upstream.instruments, upstream.size_precisions = frozenset(instruments), precisions
            upstream.venues = {iid.rsplit(".", 1)[1] for iid in instruments}

    def node_of(self, venue: str) -> Upstream | None:
        """The node whose instruments are on ``venue``."""
        return next((node for node in self.nodes if venue in node.venues), None)

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()


def passed_headers(headers: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The headers of :data:`PASSED_HEADERS` among ``headers`` (any case), lower-cased."""
    lowered = {name.lower(): value for name, value in headers.items()}
    return tuple((name, lowered[name]) for name in PASSED_HEADERS if name in lowered)


def _looked(upstream: Upstream, look: asyncio.Future[None]) -> None:
    upstream.looking, upstream.looked_at = None, time.monotonic()
    if not look.cancelled():
        look.exception()  # retrieved here: every waiter may have been cancelled


def _failure(upstream: Upstream, what: str, cause: str, detail: str | None = None) -> UpstreamError:
    """The failure of ``what`` on ``upstream`` in public words, recorded as its latest; logged
    with its address and ``detail`` when it was reachable before."""
    error = UpstreamError(upstream.name, what, cause)
    if upstream.reachable is not False:
        log.warning("%s (%s): %s: %s", upstream.name, upstream.base_url, what, detail or cause)
    upstream.reachable, upstream.last_error = False, str(error)
    return error
