"""How the gateway answers the routes a node or the screener serves, by what each means:

- one instrument's (``/v2/bars``, ``/v2/coverage/{id}``, ``/v2/hydration/{id}``, v1 ``/bars``):
  relayed to the node of the instrument's venue, bytes as the node produced them;
- lists over every node (instruments, coverage, hydration, selection, facts, data): the
  nodes' pages one node after the other under one cursor that spans them (signed, bound to the
  route and its query); a node that cannot be reached is passed over, its part missing;
- the screener's: relayed exactly (a screen body byte for byte), status and body as it answered
  (and its Retry-After: a busy screener's 503 says when to come back);
- instrument search: every node at once, one result over theirs (:mod:`spine.gateway.search`);
- roster changes (``POST /v2/selection``, ``/remove``): each node takes the ids of its venues;
- a paper node's (the execution reads, the operator's orders and their commands): the paper
  node of the instrument's venue, else the first paper node (a command: each in turn);
- the rest of a node's (engine pin, connection, resolutions, the v1 reads): the first node
  that answers.

An upstream that cannot be reached is 502 UPSTREAM_UNAVAILABLE naming it; its own refusals
(a 404 for an instrument it does not hold, a 400) come back as it sent them."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode

import msgspec

from spine.gateway.search import Searches
from spine.gateway.upstream_table import MISS_REFRESH_SECS, Upstream, Upstreams
from spine.http.app import Relayed
from spine.http.errors import HttpError
from spine.http.request import Query
from spine.http.routes import Operation
from spine.upstream_errors import UpstreamError
from spine.wire.cursors import InvalidCursor, decode_token, encode_token

__all__ = ["Relay"]

Handler = Callable[..., Awaitable[Relayed]]
#: Routes naming one instrument: where its id is.
BY_INSTRUMENT = {"spine.bars.list", "spine.coverage.get", "spine.hydration.get", "spine.v1.bars.get"}
#: Lists merged over every node.
MERGED = {
    "spine.instruments.list",
    "spine.coverage.list",
    "spine.coverage.failures",
    "spine.coverage.quiet",
    "spine.hydration.list",
    "spine.selection.get",
    "spine.facts.list",
    "spine.data.list",
}
#: Roster changes: each node takes the ids of its venues.
SPLIT_BY_VENUE = {"spine.selection.set", "spine.selection.remove"}
_encode = msgspec.json.encode
_SEARCH_ID = re.compile(r"[0-9a-f]{64}")


class Relay:
    """The relaying handlers of one gateway over ``upstreams``."""

    def __init__(self, upstreams: Upstreams) -> None:
        self.upstreams = upstreams
        self.searches = Searches(upstreams)

    def handler(self, op: Operation) -> Handler:
        """The handler relaying ``op`` (called with the query, path parameters and a body)."""
        if "screener" in op.served_by:
            return lambda query, params, body=None: self.screener(op, query, params, body)
        if op.id in BY_INSTRUMENT:
            return lambda query, params, body=None: self.by_instrument(op, query, params)
        if op.id in MERGED:
            return lambda query, params, body=None: self.merged(op, query, params)
        if op.id == "spine.instruments.search":
            return lambda query, params, body: self.searches.search(body)
        if op.id == "spine.instruments.search_result":
            return lambda query, params, body=None: self._search_page(query, params)
        if op.id in SPLIT_BY_VENUE:
            return lambda query, params, body: self.split_by_venue(op, query, params, body)
        if "paper" in op.served_by:
            return lambda query, params, body=None: self.paper(op, query, params, body)
        return lambda query, params, body=None: self.first_node(op, query, params, body)

    # one upstream

    async def screener(self, op: Operation, query: Query, params: dict[str, str], body: Any) -> Relayed:
        screener = self.upstreams.screener
        if screener is None:
            raise HttpError("UPSTREAM_UNAVAILABLE", f"{op.method} {op.path}: this gateway has no screener configured")
        return await self._relay(screener, op, query.raw, params, body)

    async def by_instrument(self, op: Operation, query: Query, params: dict[str, str]) -> Relayed:
        iid = params.get("id") or query.instrument_id()
        if iid is None and (bar_type := query.text("bar_type")) is not None:
            iid = bar_type.rsplit("-", 4)[0]  # SYMBOL.VENUE-<n>-<UNIT>-LAST-<CHANNEL>
        if iid is None:  # the node states what is missing
            return await self.first_node(op, query, params, None)
        return await self._relay(await self.node_of(iid), op, query.raw, params, None)

    async def node_of(self, iid: str, held: bool = False) -> Upstream:
        """The node of ``iid``'s venue (that ingests ``iid`` when ``held``; looked for again
        after a refresh on a miss), or 404 NOT_FOUND naming the venues served."""
        venue = iid.rsplit(".", 1)[-1]
        node = self.upstreams.node_of(venue)
        if node is None or (held and iid not in node.instruments):
            # A venue or instrument new since the last look (rate-limited: see Upstreams).
            await self.upstreams.refresh(within=MISS_REFRESH_SECS)
            node = self.upstreams.node_of(venue)
        if node is None:
            known = sorted({v for n in self.upstreams.nodes for v in n.venues})
            raise HttpError(
                "NOT_FOUND",
                f"{iid}: no node behind this gateway serves venue {venue!r}; venues: "
                f"{', '.join(known) or 'none reachable'}",
            )
        if held and iid not in node.instruments:
            raise HttpError("NOT_FOUND", f"{iid} is not ingested on {node.name}, the node of venue {venue!r}")
        return node

    async def first_node(self, op: Operation, query: Query, params: dict[str, str], body: Any) -> Relayed:
        errors = []
        for node in sorted(self.upstreams.nodes, key=lambda n: n.reachable is False):
            try:
                return await self._relay(node, op, query.raw, params, body)
            except HttpError as error:
                errors.append(error.text)
        raise HttpError("UPSTREAM_UNAVAILABLE", "; ".join(errors))

    async def paper(self, op: Operation, query: Query, params: dict[str, str], body: Any) -> Relayed:
        """A paper node's route: to the paper node of the instrument's venue (the body's or the
        query's), else the first paper node; a command's id is looked for on each in turn."""
        iid = getattr(body, "instrument_id", None) or query.instrument_id()
        if iid is not None:
            node = await self.node_of(iid)
            if not _paper(node, op):
                raise HttpError("CAPABILITY_DEFERRED", f"{op.id}: {node.name}, the node of {iid}, is no paper node")
            return await self._relay(node, op, query.raw, params, body)
        papers = [node for node in self.upstreams.nodes if _paper(node, op)]
        if not papers:
            raise HttpError("CAPABILITY_DEFERRED", f"{op.id}: no paper node behind this gateway serves it")
        if op.id == "spine.commands.get":  # a command lives on the node that took it
            for node in papers:
                answer = await self._relay(node, op, query.raw, params, body)
                if answer.status != 404 or node is papers[-1]:
                    return answer
        return await self._relay(papers[0], op, query.raw, params, body)

    async def _relay(self, upstream: Upstream, op: Operation, raw: str, params: dict[str, str], body: Any) -> Relayed:
        path = op.path
        for name, value in params.items():
            path = path.replace("{" + name + "}", _segment(value))
        content = body if isinstance(body, bytes) or body is None else _encode(body)
        try:
            status, answer, headers = await self.upstreams.exchange(upstream, op.method, path, raw, content)
        except UpstreamError as error:
            raise HttpError("UPSTREAM_UNAVAILABLE", str(error).removeprefix("UPSTREAM_UNAVAILABLE: ")) from None
        return Relayed(status, answer, headers)

    async def _search_page(self, query: Query, params: dict[str, str]) -> Relayed:
        if not _SEARCH_ID.fullmatch(params["id"]):
            raise HttpError("INVALID_PARAMETER", f"id={params['id']!r} is not a search id (64 lowercase hex digits)")
        limit = query.limit(100) if query.text("limit") is not None else None
        return await self.searches.page(params["id"], query.text("cursor"), limit)

    async def split_by_venue(self, op: Operation, query: Query, params: dict[str, str], body: Any) -> Relayed:
        """A roster change: every id's venue must have a node (else 404 before any node is
        asked); each node takes its ids; the answers' rows in one page, by id. A node's refusal
        is relayed as it came (the nodes asked before it keep their change)."""
        groups: dict[str, list[str]] = {}
        for iid in body.instrument_ids:
            node = await self.node_of(iid)
            groups.setdefault(node.base_url, []).append(iid)
        rows: list[Any] = []
        page: dict[str, Any] = {}
        for node in self.upstreams.nodes:
            if node.base_url in groups:
                relayed = await self._relay(node, op, query.raw, params, {"instrument_ids": groups[node.base_url]})
                if relayed.status != 200:
                    return relayed
                page = msgspec.json.decode(relayed.body)
                rows += page["items"]
        page["items"] = sorted(rows, key=lambda row: row["instrument_id"])
        return Relayed(200, _encode(page))

    # lists over every node

    async def merged(self, op: Operation, query: Query, params: dict[str, str]) -> Relayed:
        """The nodes' pages in node order under one cursor: ``[node index, the node's cursor]``."""
        pairs = [(k, v) for k, v in parse_qsl(query.raw, keep_blank_values=True) if k != "cursor"]
        route = f"{op.path}?{urlencode(sorted(pairs))}"
        for name, value in params.items():
            route = route.replace("{" + name + "}", value)
        index, cursor = 0, None
        if (token := query.text("cursor")) is not None:
            try:
                index, cursor = msgspec.json.decode(decode_token(route, token), type=tuple[int, str | None])
            except (InvalidCursor, msgspec.DecodeError) as error:
                raise HttpError("INVALID_CURSOR", str(error).split(": ", 1)[-1]) from None
        nodes = self.upstreams.nodes
        while index < len(nodes):
            upstream_query = urlencode(pairs + ([("cursor", cursor)] if cursor is not None else []))
            try:
                relayed = await self._relay(nodes[index], op, upstream_query, params, None)
            except HttpError:
                index, cursor = index + 1, None  # unreachable: its part is missing (see the module docs)
                continue
            if relayed.status != 200:
                return relayed
            page = msgspec.json.decode(relayed.body)
            after = page["next_cursor"]
            if after is not None:
                index, cursor = index, after
            else:  # this node is done: the next one not known to be out of reach
                index, cursor = index + 1, None
                while index < len(nodes) and nodes[index].reachable is False:
                    index += 1
            page["next_cursor"] = None if index >= len(nodes) else encode_token(route, _encode([index, cursor]))
            return Relayed(200, _encode(page))
        raise HttpError(
            "UPSTREAM_UNAVAILABLE",
            f"{op.method} {op.path}: no node behind this gateway could be "
            "reached: " + "; ".join(n.last_error or n.name for n in nodes),
        )


def _paper(node: Upstream, op: Operation) -> bool:
    """Whether ``node`` is a paper node: its registry serves ``op`` (READY, or DISABLED for a
    command on a public-readonly node, or WARMING)."""
    return node.registry.get(op.id, {}).get("availability") in ("READY", "DISABLED", "WARMING")


def _segment(value: str) -> str:
    """A path parameter as one encoded path segment: the server decoded it, so a ``?``, ``#``
    or ``/`` in it would otherwise reach the upstream as a query, a fragment or a path step,
    and a ``.`` or ``..`` segment would be resolved away."""
    encoded = quote(value, safe="")
    return encoded.replace(".", "%2E") if encoded in (".", "..") else encoded
