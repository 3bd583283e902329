"""The gateway's feed of a node stream (``spine.gateway.streams.Feed``): the node's frames go
into the gateway's hub as received, under the kind and instrument the node published them
under, whole frames only however the chunks split; heartbeats and frames it cannot key are
skipped."""

from __future__ import annotations

import httpx
import msgspec

from spine.fanout import FanOut
from spine.gateway.streams import Feed
from spine.gateway.upstream_table import Upstream
from spine.wire.bar_types import bar_kind


def frame(event: str, document: dict[str, object]) -> bytes:
    return b"event: " + event.encode() + b"\ndata: " + msgspec.json.encode(document) + b"\n\n"


BAR = frame(
    "bar",
    {
        "version": "spine.v2",
        "schema_id": "svc.bar_envelope",
        "schema_version": 1,
        "instrument_id": "BTCUSDT.SIM",
        "bar_type": "BTCUSDT.SIM-5-MINUTE-LAST-INTERNAL",
        "resolution": "5m",
        "channel": "INTERNAL",
        "bars": [{"sequence": 7}],
        "withheld": [],
    },
)
TRADE = frame(
    "trade", {"version": "spine.v2", "schema_id": "svc.trade_tick", "instrument_id": "ETHUSDT.SIM", "price": "1.5"}
)
HEARTBEAT = frame("heartbeat", {"version": "spine.v2", "schema_id": "svc.stream_heartbeat", "ts_event": "1"})


def feed(path: str) -> tuple[Feed, FanOut]:
    fanout = FanOut()
    return Feed(Upstream("node", "http://127.0.0.1:1"), path, fanout, httpx.AsyncClient()), fanout


def test_a_bar_goes_out_as_received_under_its_resolution_and_channel() -> None:
    bars, fanout = feed("/v2/stream/bars")
    kept = fanout.subscribe(instruments=["BTCUSDT.SIM"], kinds=[bar_kind("5m", "INTERNAL")])
    other = fanout.subscribe(kinds=[bar_kind("1m", "INTERNAL")])
    assert bars.publish(HEARTBEAT + BAR + BAR) == b""
    assert kept.drain() == BAR + BAR and other.drain() == b""
    assert bars.events == 2


def test_frames_split_across_chunks_go_out_whole() -> None:
    trades, fanout = feed("/v2/stream/trades")
    every = fanout.subscribe()
    data, rest, sent = HEARTBEAT + TRADE + TRADE + HEARTBEAT + TRADE, b"", []
    for k in range(0, len(data), 7):
        rest = trades.publish(rest + data[k : k + 7])
        sent.append(every.drain())
    assert rest == b"" and b"".join(sent) == TRADE * 3
    assert all(chunk.count(b"\n\n") == len(chunk) // len(TRADE) for chunk in sent if chunk)


def test_a_frame_it_cannot_key_is_skipped() -> None:
    quotes, fanout = feed("/v2/stream/quotes")
    every = fanout.subscribe()
    assert (
        quotes.publish(b'event: quote\ndata: {"no_instrument":1}\n\n' + frame("quote", {"instrument_id": "A.B"})) == b""
    )
    assert every.drain() == frame("quote", {"instrument_id": "A.B"})
    assert (quotes.unreadable, quotes.events) == (1, 1)
