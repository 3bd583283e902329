"""The ingestion actor in a real node on the simulated venue, accelerated: events fan out as
schema-valid documents, EXTERNAL and INTERNAL bars land in their own series, a minute with no
trades has no INTERNAL bar, derived bars close, and facts are latest-value slots."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import numpy as np
import pytest
from framework import sim_trading_node

from reference.wire_validator import validate
from spine.fanout import FanOut
from spine.node.actor import IngestionActor
from spine.node.persist.series_book import SeriesBook
from spine.node.sim.client import SimDataClient, SimDataClientFactory

START = 29_000_000 * 60 * 10**9
MINUTE = 60 * 10**9


def parse(stream: bytes) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for message in stream.split(b"\n\n"):
        if not message:
            continue
        head, data = message.split(b"\n", 1)
        assert head.startswith(b"event: ") and data.startswith(b"data: ")
        events.append((head[7:].decode(), json.loads(data[6:])))
    return events


class Recording(SimDataClientFactory):
    """The SIM factory, keeping the clients it builds (the test reads their market)."""

    clients: list[SimDataClient] = []

    @staticmethod
    def create(**kwargs: Any) -> SimDataClient:  # type: ignore[override]
        client = SimDataClientFactory.create(**kwargs)
        Recording.clients.append(client)
        return client


async def run(seconds: float) -> tuple[IngestionActor, SimDataClient, bytes]:
    node = sim_trading_node(speed=900.0, start_ns=START + 17 * 10**9)
    hub = FanOut()
    everything = hub.subscribe(capacity=1_000_000)
    actor = IngestionActor(hub=hub, book=SeriesBook())
    node.trader.add_actor(actor)
    node.add_data_client_factory("SIM", Recording)
    node.build()
    task = asyncio.create_task(node.run_async())
    try:
        while not node.trader.is_running:
            await asyncio.sleep(0.01)
        await asyncio.sleep(seconds / 2)
        # The venue resends a candle it already sent: a duplicate the series must count.
        client = Recording.clients[-1]
        instrument = client._instruments[0]
        newest = actor.book.series(str(instrument.id), "EXTERNAL").resume_hint()["newest_ts_event"]
        candle = client.market.minute(0, newest).candle
        client._handle_data(client.candle_bar(instrument, candle))
        await asyncio.sleep(seconds / 2)
    finally:
        await node.stop_async()
        await task
        node.kernel.dispose()
    return actor, Recording.clients[-1], await everything.next()


@pytest.fixture(scope="module")
def ingested() -> tuple[IngestionActor, SimDataClient, list[tuple[str, dict[str, Any]]]]:
    actor, client, stream = asyncio.run(run(2.5))
    return actor, client, parse(stream)


def test_every_event_is_a_schema_valid_document(ingested: Any) -> None:
    _, _, events = ingested
    kinds = {name for name, _ in events}
    assert {"quote", "trade", "bar", "mark_price", "index_price", "funding_rate", "option_greeks"} <= kinds
    schema_of = {"quote": "svc.quote_tick", "trade": "svc.trade_tick", "bar": "svc.bar_envelope"}
    for name, document in events:
        validate(document, schema_of.get(name, "svc.projection_frame"))


def test_external_bars_are_the_venue_candles_and_internal_bars_skip_quiet_minutes(ingested: Any) -> None:
    actor, client, _ = ingested
    for k, instrument_id in enumerate(actor.discovered):
        external = actor.book.series(instrument_id, "EXTERNAL")
        internal = actor.book.series(instrument_id, "INTERNAL")
        ext_ts = np.frombuffer(external.columns()["ts_event"], dtype="<u8").tolist()
        int_ts = np.frombuffer(internal.columns()["ts_event"], dtype="<u8").tolist()
        for end in ext_ts:
            candle = client.market.minute(k, end).candle
            assert candle is not None
            closes = np.frombuffer(external.columns()["close"], dtype="<i8")
            assert int(closes[ext_ts.index(end)]) == candle.close
        for end in int_ts:
            assert client.market.minute(k, end).trades, "an INTERNAL bar for a minute with no trades"
        # Every whole minute the node saw with trades has its INTERNAL bar (the first is partial).
        if int_ts:
            for end in range(int_ts[0], int_ts[-1] + 1, MINUTE):
                assert (end in int_ts) == bool(client.market.minute(k, end).trades)


def test_derived_bars_close_and_facts_are_latest_value_slots(ingested: Any) -> None:
    actor, _, events = ingested
    derived = [d for name, d in events if name == "bar" and d["resolution"] == "5m"]
    assert derived and all(d["bars"] or d["withheld"] for d in derived)
    marks = actor.facts["mark_price"]
    assert set(marks) == {i for i in actor.discovered if i.endswith("-PERP.SIM")}
    last = [d for name, d in events if name == "mark_price" and d["instrument_id"] == "BTCUSDT-PERP.SIM"][-1]
    assert marks["BTCUSDT-PERP.SIM"] == last
    assert actor.counters.bars_accepted["EXTERNAL"] > 0 and actor.counters.bars_accepted["INTERNAL"] > 0


def test_a_resent_candle_is_counted_as_a_duplicate_and_changes_nothing(ingested: Any) -> None:
    actor, _, _ = ingested
    assert actor.counters.duplicates["EXTERNAL"] == 1
    series = actor.book.series(actor.discovered[0], "EXTERNAL")
    assert series.counters()["duplicates"] == 1
    assert actor.status.document(START)["authorities"][0] == {
        "authority": "EXTERNAL",
        "gaps": actor.status.document(START)["authorities"][0]["gaps"],
        "duplicates": 1,
        "out_of_order": actor.counters.out_of_order["EXTERNAL"],
    }
