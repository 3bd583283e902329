"""The screener's reads of a real ``spine node`` on loopback: its instruments, an
instrument's durable 1-minute bars as exact columns, its live 1-minute closes; and every
failure an UpstreamError naming the node, the request and the cause."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import httpx
import numpy as np
import pytest
from nodes import free_port, get, ok

from reference.wire_validator import validate
from spine import format_decimal
from spine.screener.node_client import NodeClient, UpstreamError

T = TypeVar("T")
IID = "BTCUSDT.SIM"


def with_client(base: str, call: Callable[[NodeClient], Awaitable[T]]) -> T:
    async def run() -> T:
        async with httpx.AsyncClient(timeout=httpx.Timeout(10.0)) as client:
            return await asyncio.wait_for(call(NodeClient(base, client)), 30)

    return asyncio.run(run())


def test_instruments_are_every_page_of_the_nodes_list(base: str) -> None:
    listed = with_client(base, lambda node: node.instruments())
    first = ok(base, "/v2/instruments?limit=1000")
    assert first["next_cursor"] is None and listed == first["items"]
    assert len(listed) == 48


def test_bar_pages_are_the_nodes_rows_as_exact_columns(base: str) -> None:
    instrument = next(i for i in ok(base, "/v2/instruments?limit=1000")["items"] if i["instrument_id"] == IID)

    async def read(node: NodeClient) -> list[tuple[Any, dict[str, Any]]]:
        return [page async for page in node.bar_pages(instrument, "EXTERNAL")]

    served = ok(base, f"/v2/bars?instrument_id={IID}&limit=5000")["bars"]  # first: the pages read later hold it
    pages = with_client(base, read)
    bars = {k: np.concatenate([columns[k] for columns, _ in pages]) for k in pages[0][0]}
    assert len(bars["ts_event"]) >= len(served) > 0
    p, s = instrument["price_precision"], instrument["size_precision"]
    for k, row in enumerate(served):  # the node may have closed more minutes since
        assert (int(bars["sequence"][k]), str(bars["ts_event"][k])) == (row["sequence"], row["ts_event"])
        assert [format_decimal(int(bars[name][k]), p) for name in ("open", "high", "low", "close")] == [
            row[name] for name in ("open", "high", "low", "close")
        ]
        assert format_decimal(int(bars["volume"][k]), s) == row["volume"]
    validate(pages[0][1], "svc.series_coverage")
    assert np.all(np.diff(bars["ts_event"].astype(np.int64)) > 0)


def test_after_sequence_reads_only_the_newer_bars(base: str) -> None:
    instrument = next(i for i in ok(base, "/v2/instruments?limit=1000")["items"] if i["instrument_id"] == IID)
    cut = ok(base, f"/v2/bars?instrument_id={IID}&limit=5000")["bars"][-3]["sequence"]

    async def read(node: NodeClient) -> list[int]:
        return [
            int(s)
            async for columns, _ in node.bar_pages(instrument, "EXTERNAL", after_sequence=cut)
            for s in columns["sequence"]
        ]

    assert all(s > cut for s in with_client(base, read))


def test_closes_are_the_nodes_live_one_minute_bars(base: str) -> None:
    async def first_two(node: NodeClient) -> list[dict[str, Any]]:
        events = []
        async for event in node.closes("EXTERNAL"):
            events.append(event)
            if len(events) == 2:
                return events
        return events

    events = with_client(base, first_two)
    assert len(events) == 2
    for event in events:
        validate(event, "svc.bar_envelope")
        assert (event["resolution"], event["channel"], len(event["bars"])) == ("1m", "EXTERNAL", 1)


@pytest.mark.parametrize(
    ("path", "cause"),
    [
        ("/v2/nowhere", r"GET /v2/nowhere: HTTP 404: NOT_FOUND: no route /v2/nowhere"),
        ("/v2/hydration/NOPE.SIM", r"GET /v2/hydration/NOPE.SIM: HTTP 404: NOT_FOUND: NOPE.SIM has no hydration state"),
    ],
)
def test_a_refused_request_names_the_node_and_its_detail(base: str, path: str, cause: str) -> None:
    with pytest.raises(UpstreamError, match=r"UPSTREAM_UNAVAILABLE: node-1: " + cause):
        with_client(base, lambda node: node.get(path))


def test_an_unreachable_node_is_an_upstream_error() -> None:
    down = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(UpstreamError, match=r"UPSTREAM_UNAVAILABLE: node-1: GET /v2/instruments: connection refused"):
        with_client(down, lambda node: node.instruments())

    async def closes(node: NodeClient) -> None:
        async for _ in node.closes("EXTERNAL"):
            pass

    with pytest.raises(
        UpstreamError, match=r"node-1: GET /v2/stream/bars\?resolution=1m&channel=EXTERNAL: connection refused"
    ):
        with_client(down, closes)


def test_a_stream_route_the_node_refuses_is_an_upstream_error(base: str) -> None:
    assert get(base + "/v2/stream/bars?channel=BOTH")[0] == 400

    async def closes(node: NodeClient) -> None:
        async for _ in node.closes("BOTH"):
            pass

    with pytest.raises(UpstreamError, match=r"GET /v2/stream/bars\?resolution=1m&channel=BOTH: HTTP 400"):
        with_client(base, closes)
