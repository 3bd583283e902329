"""Instrument search through the gateway: the query goes to every node at once, and the answer
is one ``svc.search_result`` over theirs: the nodes' matches in node order (each node ranks its
own), ``total`` their sum, under a search id of the gateway's (the query and the gateway's run)
whose pages (``GET /v2/instruments/search/{id}``) walk the nodes' kept searches in turn.

The newest ``KEPT`` searches are kept; an older id is 404, as on a node."""

from __future__ import annotations

import asyncio
import secrets
from collections import OrderedDict
from typing import Any

import msgspec

from spine._core import identity
from spine.gateway.upstream_table import Upstream, Upstreams
from spine.http.app import Relayed
from spine.http.errors import HttpError
from spine.upstream_errors import UpstreamError
from spine.wire.cursors import InvalidCursor, decode_token, encode_token

__all__ = ["Searches"]

KEPT = 256
_encode = msgspec.json.encode


class Searches:
    """Kept searches: the gateway's id -> ``(limit, [(node, the node's search id, its total)])``."""

    def __init__(self, upstreams: Upstreams) -> None:
        self.upstreams = upstreams
        self.run_id = secrets.token_hex(16)
        self.kept: OrderedDict[str, tuple[int, list[tuple[Upstream, str, int]]]] = OrderedDict()

    async def search(self, body: Any) -> Relayed:
        content = _encode(body)
        nodes = self.upstreams.nodes
        answers = await asyncio.gather(*(self._post(node, content) for node in nodes), return_exceptions=True)
        parts: list[tuple[Upstream, dict[str, Any]]] = []
        for node, answer in zip(nodes, answers, strict=True):
            if isinstance(answer, Relayed):
                if answer.status != 200:
                    return answer  # the query's refusal, as every node would give it
                parts.append((node, msgspec.json.decode(answer.body)))
        if not parts:
            raise HttpError(
                "UPSTREAM_UNAVAILABLE",
                "POST /v2/instruments/search: no node behind this gateway could "
                "be reached: " + "; ".join(n.last_error or n.base_url for n in nodes),
            )
        first = parts[0][1]
        search_id = identity("search_id", {"query": first["query"], "run_id": self.run_id})
        self.kept[search_id] = (first["query"]["limit"], [(n, p["search_id"], p["total"]) for n, p in parts])
        self.kept.move_to_end(search_id)
        while len(self.kept) > KEPT:
            self.kept.popitem(last=False)
        return await self.page(search_id, None, None)

    async def page(self, search_id: str, cursor: str | None, limit: int | None) -> Relayed:
        if search_id not in self.kept:
            raise HttpError(
                "NOT_FOUND",
                f"no search {search_id} is kept on this gateway (the newest {KEPT} are); "
                "POST /v2/instruments/search again",
            )
        default, parts = self.kept[search_id]
        limit = default if limit is None else limit
        route = f"/v2/instruments/search/{search_id}?limit={limit}"
        index, node_cursor = 0, None
        if cursor is not None:
            try:
                index, node_cursor = msgspec.json.decode(decode_token(route, cursor), type=tuple[int, str | None])
            except (InvalidCursor, msgspec.DecodeError) as error:
                raise HttpError("INVALID_CURSOR", str(error).split(": ", 1)[-1]) from None
        node, node_search, _ = parts[index]
        query = f"limit={limit}" + ("" if node_cursor is None else f"&cursor={node_cursor}")
        try:
            status, body = await self.upstreams.request(node, "GET", f"/v2/instruments/search/{node_search}", query)
        except UpstreamError as error:
            raise HttpError("UPSTREAM_UNAVAILABLE", str(error).removeprefix("UPSTREAM_UNAVAILABLE: ")) from None
        if status != 200:
            return Relayed(status, body)
        page = msgspec.json.decode(body)
        after = page["next_cursor"]
        index, node_cursor = (index, after) if after is not None else (index + 1, None)
        page["search_id"] = search_id
        page["total"] = sum(total for _, _, total in parts)
        page["next_cursor"] = None if index >= len(parts) else encode_token(route, _encode([index, node_cursor]))
        return Relayed(200, _encode(page))

    async def _post(self, node: Upstream, content: bytes) -> Relayed:
        status, body = await self.upstreams.request(node, "POST", "/v2/instruments/search", "", content)
        return Relayed(status, body)
