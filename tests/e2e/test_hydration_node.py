"""Hydration in a real node on the accelerated simulated venue: each history outcome reaches
its state (history, no history, a transient failure retried with backoff, a hard failure), and
after a restart a READY series asks only for the gap above its own newest close."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest
from nodes import free_port, get, node_env, spawn, stop, wait_for

from reference.wire_validator import validate
from spine.node.config import NodeConfig
from spine.node.framework import venue_config
from spine.node.persist.store import file_span
from spine.node.service import NodeFailed, VenueNode

START = 29_000_000 * 60 * 10**9
MINUTE = 60 * 10**9
PLAN = {"ETHUSDT.SIM": "no_history", "SOLUSDT.SIM": "transient:2", "BNBUSDT.SIM": "failed"}


def config(data_dir: Path, start_ns: int) -> NodeConfig:
    return msgspec.convert(
        {
            "data_dir": str(data_dir),
            "flush_secs": 0.3,
            "hydrate_minutes": 60,
            "sim": {
                "start_ns": start_ns,
                "speed": 600,
                "history": PLAN,
                "spot": 6,
                "perpetuals": 2,
                "option_expiries": 0,
            },
        },
        NodeConfig,
    )


async def run(node: VenueNode, seconds: float) -> None:
    stop = asyncio.Event()
    asyncio.get_running_loop().call_later(seconds, stop.set)
    await node.run(stop)


def test_each_outcome_and_a_restart_that_asks_only_for_the_gap(tmp_path: Path) -> None:
    first = VenueNode(config(tmp_path, START))
    asyncio.run(run(first, 3.0))
    book = first.hydration
    assert book.state("BTCUSDT.SIM") == "READY" and book.bars("BTCUSDT.SIM") >= 55
    assert book.state("ETHUSDT.SIM") == "NO_HISTORY"
    assert book.state("SOLUSDT.SIM") == "READY"
    assert book.state("BNBUSDT.SIM") == "FAILED"
    assert [r[0] for r in first.hydrator.requests].count("SOLUSDT.SIM") == 3  # two transient, then history
    page = book.page(None, 100)
    validate(page)
    states = {item["instrument_id"]: item for item in page["items"]}
    assert states["ETHUSDT.SIM"]["state"] == "READY" and states["ETHUSDT.SIM"]["internal_state"] == "NO_HISTORY"
    assert states["BNBUSDT.SIM"]["last_error"]
    eth = first.actor.coverage("ETHUSDT.SIM", "EXTERNAL")
    assert eth["exhausted"] and eth["history_terminal"]
    validate(eth)
    # A READY series may have older history the window did not ask for; INTERNAL has no
    # backfill at all, so its history is terminal from the start.
    assert not first.actor.coverage("BTCUSDT.SIM", "EXTERNAL")["history_terminal"]
    internal = first.actor.coverage("BTCUSDT.SIM", "INTERNAL")
    assert internal["exhausted"] and internal["history_terminal"] and internal["sparse_ok"]
    validate(internal)
    btc = first.book.series("BTCUSDT.SIM", "EXTERNAL")
    newest = btc.resume_hint()["newest_ts_event"]
    assert newest is not None

    # Restart later on: the reloaded series resumes from its own newest close, and serves
    # its bars as before (same sequences) with the same observed time (skipped candles stay
    # gaps, not unobserved time).
    before = {
        (iid, ch): (s.page(limit=5000), s.coverage(), s.last_sequence, s.fold("1h").withheld())
        for iid, ch, s in first.book.held()
        if len(s)
    }
    second = VenueNode(config(tmp_path, START + 120 * MINUTE))
    assert second.reloaded > 0
    after = {
        (iid, ch): (s.page(limit=5000), s.coverage(), s.last_sequence, s.fold("1h").withheld())
        for iid, ch, s in second.book.held()
        if len(s)
    }
    assert after == before
    resume = second.book.series("BTCUSDT.SIM", "EXTERNAL").resume_hint()["resume_from"]
    assert resume is not None and resume >= newest
    asyncio.run(run(second, 1.5))
    asked = [r for r in second.hydrator.requests if r[0] == "BTCUSDT.SIM"]
    assert asked and asked[0][1] == newest  # the gap above its close, not a fresh window of 60 minutes
    assert asked[0][2] - asked[0][1] != 60 * MINUTE


def test_ledger_reconciles_with_discovery_and_status_follows_the_run(tmp_path: Path) -> None:
    node = VenueNode(config(tmp_path, START))
    assert not node.ledger.registered
    asyncio.run(run(node, 2.0))
    page = node.ledger.page(None, 1000, "all")
    validate(page)
    assert len(page["items"]) == len(node.actor.discovered) == 8
    (shard,) = page["shards"]
    assert shard["discovered"] == 8 and shard["active"] + shard["inactive"] == 8
    c = shard["channels"]
    assert c["planned"] + c["subscribed"] + c["failed"] == c["eligible"]
    assert c["with_flow"] + c["quiet"] == c["subscribed"]
    assert c["eligible"] + c["upstream_unsupported"] == 8 * 11
    btc = node.ledger.entry("BTCUSDT.SIM")
    validate(btc)
    channels = {c["channel"]: c for c in btc["items"][0]["channels"]}
    assert channels["trades"]["flow"] == "with_flow"
    assert channels["mark_price"]["subscription"] is None  # spot: upstream_unsupported
    status = node.status.document(START)
    validate(status)
    assert status["lifecycle"] == "COMPLETED"
    assert status["counters"]["bars_accepted"] == sum(node.actor.counters.bars_accepted.values())
    assert [a["authority"] for a in status["authorities"]] == ["EXTERNAL", "INTERNAL"]


def test_the_periodic_consolidation_leaves_one_file_per_series(tmp_path: Path) -> None:
    """Consolidation merges the files reaching into each series' span into one; the files
    below it (the retention, the backfill's days) stay as they are, disjoint."""
    node = VenueNode(
        msgspec.convert(
            {
                "data_dir": str(tmp_path),
                "flush_secs": 0.2,
                "consolidation_secs": 0.9,
                "hydrate_minutes": 10,
                "sim": {"start_ns": START, "speed": 600, "spot": 2, "perpetuals": 0, "option_expiries": 0},
            },
            NodeConfig,
        )
    )
    asyncio.run(run(node, 2.0))
    node.consolidate()
    for iid, channel, series in node.book.held():
        directory = tmp_path / "catalog" / channel.lower() / "data" / "bar" / f"{iid}-1-MINUTE-LAST-{channel}"
        oldest = int(np.frombuffer(series.columns()["ts_event"], "<u8")[0]) if len(series) else None
        spans = sorted(file_span(path) for path in directory.glob("*.parquet"))
        assert oldest is None or [span for span in spans if span[1] >= oldest] == [spans[-1]], directory
        assert all(a[1] < b[0] for a, b in zip(spans, spans[1:], strict=False)), spans


def test_a_manifest_gives_unretained_instruments_zero_demand(tmp_path: Path) -> None:
    manifest = tmp_path / "retained.txt"
    manifest.write_text("# the retained set\nBTCUSDT.SIM\nETHUSDT-PERP.SIM\n")
    node = VenueNode(
        msgspec.convert(
            {
                "data_dir": str(tmp_path / "data"),
                "flush_secs": 0.3,
                "hydrate_minutes": 10,
                "manifest": str(manifest),
                "sim": {"start_ns": START, "speed": 600, "spot": 4, "perpetuals": 2, "option_expiries": 0},
            },
            NodeConfig,
        )
    )
    asyncio.run(run(node, 1.5))
    assert sorted(node.actor.ingested) == ["BTCUSDT.SIM", "ETHUSDT-PERP.SIM"]
    assert sorted(r[0] for r in node.hydrator.requests) == ["BTCUSDT.SIM", "ETHUSDT-PERP.SIM"]
    assert sorted(node.book.instruments()) == ["BTCUSDT.SIM", "ETHUSDT-PERP.SIM"]
    assert node.retention_state("SOLUSDT.SIM") == "unretained"
    coverage = node.actor.coverage("BTCUSDT.SIM", "EXTERNAL")
    validate(coverage)
    assert coverage["retention_state"] == "retained" and not coverage["history_terminal"]
    # Unretained instruments are still discovered and classified: the ledger reconciles with
    # discovery, their eligible channels unretained (no subscribe call), never planned.
    assert len(node.actor.discovered) == 6
    page = node.ledger.page(None, 1000, "all")
    validate(page)
    (shard,) = page["shards"]
    assert shard["discovered"] == 6 and shard["active"] == 6
    c = shard["channels"]
    assert c["planned"] + c["subscribed"] + c["failed"] + c["unretained"] == c["eligible"]
    assert c["eligible"] + c["upstream_unsupported"] == 6 * 11
    sol = {ch["channel"]: ch for ch in node.ledger.entry("SOLUSDT.SIM")["items"][0]["channels"]}
    assert sol["trades"] == {
        "channel": "trades",
        "eligibility": "eligible",
        "subscription": "unretained",
        "flow": None,
        "last_event_ts": None,
        "last_error": None,
    }
    assert sol["mark_price"]["eligibility"] == "upstream_unsupported"
    assert {ch["subscription"] for ch in node.ledger.entry("BTCUSDT.SIM")["items"][0]["channels"]} <= {
        "subscribed",
        None,
    }
    unmanaged = VenueNode(msgspec.convert({"data_dir": str(tmp_path / "other")}, NodeConfig))
    assert unmanaged.retention_state("SOLUSDT.SIM") == "unmanaged"
    assert unmanaged.actor.retention("SOLUSDT.SIM") == "unmanaged"  # what its bar pages carry


def test_hydration_through_the_frameworks_request_bars(tmp_path: Path, monkeypatch: object) -> None:
    """The adapters' path (Binance, Bybit, ...): history asked with the framework's
    request_bars, answered by the client's ``_request_bars`` (the SIM client implements it, as
    an adapter does). History fills the series; an empty answer is no history; an adapter that
    never answers (the framework has no failure response) is retried as transient."""
    from spine.node.hydrator import FrameworkHistory

    sources: list[FrameworkHistory] = []

    def framework(self: VenueNode, client: object) -> FrameworkHistory:
        sources.append(FrameworkHistory(self.actor, timeout_secs=0.3))
        return sources[-1]

    monkeypatch.setattr(VenueNode, "_history_source", framework)  # type: ignore[attr-defined]
    node = VenueNode(config(tmp_path, START))
    asyncio.run(run(node, 3.0))
    assert sources and node.hydrator is not None
    book = node.hydration
    assert book.state("BTCUSDT.SIM") == "READY" and book.bars("BTCUSDT.SIM") >= 55
    btc = node.book.series("BTCUSDT.SIM", "EXTERNAL")
    first = btc.coverage()[0][0]
    assert first <= START - 55 * MINUTE  # the hour before the start came from history
    assert book.state("ETHUSDT.SIM") == "NO_HISTORY"
    assert book.state("SOLUSDT.SIM") == "READY"  # two unanswered requests, then history
    assert [r[0] for r in node.hydrator.requests].count("SOLUSDT.SIM") == 3
    assert book.state("BNBUSDT.SIM") in ("RETRY_WAIT", "HYDRATING", "FAILED")
    assert node.actor._history == {}  # nothing left collecting


def _gaps_in_input(node: VenueNode) -> list[tuple[str, str, int]]:
    """Record the (channel, resolution, end) of each bucket the node withholds for a gap in its
    input (startup buckets it saw only part of are UNOBSERVED, not gaps in input)."""
    seen: list[tuple[str, str, int]] = []
    publish = node.actor._publish_derived

    def recording(instrument_id: str, channel: str, event: tuple[Any, ...]) -> None:
        if event[1] == "GAP_IN_INPUT":
            seen.append((channel, event[0], event[3]))
        publish(instrument_id, channel, event)

    node.actor._publish_derived = recording  # type: ignore[method-assign]
    return seen


def test_an_external_candle_sent_at_its_minutes_close_is_never_taken_for_a_gap(tmp_path: Path) -> None:
    """The venue sends each candle at its minute's close, among that instant's other events: the
    minute must not be counted missed (nor its buckets withheld) before the candle had its
    grace. With no grace the same run withholds buckets: the check sees the problem it guards."""

    def node(grace: float, where: str) -> VenueNode:
        return VenueNode(
            msgspec.convert(
                {
                    "data_dir": str(tmp_path / where),
                    "flush_secs": 0.3,
                    "hydrate_minutes": 0,
                    "external_grace_secs": grace,
                    "sim": {
                        "start_ns": START,
                        "speed": 600,
                        "spot": 6,
                        "perpetuals": 2,
                        "option_expiries": 0,
                        "candle_skip": 0.0,
                    },
                },
                NodeConfig,
            )
        )

    graced, hasty = node(5.0, "graced"), node(0.0, "hasty")
    graced_gaps, hasty_gaps = _gaps_in_input(graced), _gaps_in_input(hasty)
    asyncio.run(run(graced, 3.0))
    asyncio.run(run(hasty, 3.0))
    assert sum(graced.actor.counters.bars_accepted.values()) > 100
    assert graced_gaps == []
    assert any(channel == "EXTERNAL" for channel, _, _ in hasty_gaps)


def test_an_accelerated_venue_restarted_carries_on_from_the_newest_close(tmp_path: Path) -> None:
    """A 600x venue runs hours ahead of the wall: restarted without a configured start, it
    continues from the newest reloaded close rather than replaying held minutes as duplicates."""
    settings = {
        "data_dir": str(tmp_path),
        "flush_secs": 0.3,
        "hydrate_minutes": 10,
        "sim": {"speed": 600, "spot": 2, "perpetuals": 0, "option_expiries": 0},
    }
    first = VenueNode(msgspec.convert(settings, NodeConfig))
    assert venue_config(first.config, first.book) is first.config  # nothing reloaded: as configured
    asyncio.run(run(first, 2.0))
    newest = first.book.series("BTCUSDT.SIM", "EXTERNAL").resume_hint()["newest_ts_event"]
    assert newest is not None and newest > time.time_ns()  # ahead of the wall
    second = VenueNode(msgspec.convert(settings, NodeConfig))
    assert venue_config(second.config, second.book).sim.start_ns == max(
        s.resume_hint()["newest_ts_event"] or 0 for _, _, s in second.book.held()
    )
    asyncio.run(run(second, 1.5))
    counters = second.actor.counters
    assert sum(counters.bars_accepted.values()) > 0
    assert sum(counters.duplicates.values()) == 0


def test_a_restart_keeps_every_bar_of_a_full_series(tmp_path: Path) -> None:
    """The files hold more than a full series (its retention, the backfill below it): a
    restart reloads exactly the bars the stopped node served (same sequences, same coverage),
    not the newest ``capacity`` the files hold."""
    settings = {
        "data_dir": str(tmp_path),
        "flush_secs": 0.2,
        "capacity": 40,
        "hydrate_minutes": 60,
        "sim": {"start_ns": START, "speed": 600, "spot": 2, "perpetuals": 0, "option_expiries": 0},
    }
    first = VenueNode(msgspec.convert(settings, NodeConfig))
    asyncio.run(run(first, 3.0))
    before = {
        (iid, ch): (s.page(limit=5000), s.coverage(), s.last_sequence) for iid, ch, s in first.book.held() if len(s)
    }
    assert len(first.book.series("BTCUSDT.SIM", "EXTERNAL")) == 40
    later = {**settings, "sim": {**settings["sim"], "start_ns": START + 120 * MINUTE}}
    second = VenueNode(msgspec.convert(later, NodeConfig))
    after = {
        (iid, ch): (s.page(limit=5000), s.coverage(), s.last_sequence) for iid, ch, s in second.book.held() if len(s)
    }
    assert after == before
    btc = "BTCUSDT.SIM-1-MINUTE-LAST-EXTERNAL"
    assert len(second.stores["EXTERNAL"].load(btc)) > 40  # the files keep what the series let go


def test_a_run_that_fails_is_failed_flushed_and_raised(tmp_path: Path) -> None:
    """The spec's RUNNING -> FAILED: when the framework's run ends with an error, the engine
    status is FAILED with that error (never COMPLETED), the closed bars are still flushed, and
    ``run`` raises at once (the process exits non-zero) rather than at the next flush."""
    node = VenueNode(config(tmp_path, START))

    async def main() -> None:
        trading = node.build(asyncio.get_running_loop())
        run_async = trading.run_async

        async def failing() -> None:
            asyncio.ensure_future(run_async())
            await asyncio.sleep(1.5)
            raise RuntimeError("the venue feed broke")

        trading.run_async = failing  # type: ignore[method-assign]
        stop = asyncio.Event()
        await node.run(stop)

    began = time.monotonic()
    with pytest.raises(NodeFailed, match="the venue feed broke"):
        asyncio.run(main())
    assert time.monotonic() - began < 20
    document = node.status.document(START)
    validate(document)
    assert document["lifecycle"] == "FAILED" and "the venue feed broke" in document["last_error"]
    btc = "BTCUSDT.SIM-1-MINUTE-LAST-EXTERNAL"
    series = node.book.series("BTCUSDT.SIM", "EXTERNAL")
    durable = node.stores["EXTERNAL"].load(btc, newest=len(series))
    assert [b.ts_event for b in durable] == np.frombuffer(series.columns()["ts_event"], "<u8").tolist() != []


def test_an_http_server_that_cannot_listen_ends_the_run(tmp_path: Path) -> None:
    """The node's HTTP server failing (its port taken) ends the run with an error, at once,
    instead of leaving a node that ingests with no HTTP surface."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        settings = msgspec.to_builtins(config(tmp_path, START))
        node = VenueNode(msgspec.convert({**settings, "port": taken.getsockname()[1]}, NodeConfig))

        async def main() -> None:
            await node.run(asyncio.Event(), serve_http=True)

        began = time.monotonic()
        with pytest.raises(NodeFailed, match="in use"):
            asyncio.run(main())
    assert time.monotonic() - began < 20


def test_hydrated_history_is_on_disk_before_the_periodic_flush(tmp_path: Path) -> None:
    """A series is durable once its hydration completes (not at the next periodic flush, an
    hour away here): a backtest worker reading the catalog sees the bars the node serves. The
    node answers its health while it writes (the write is off its loop)."""
    from nautilus_trader.persistence.catalog import ParquetDataCatalog

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    config_file = tmp_path / "node.toml"
    config_file.write_text(
        f"flush_secs = 3600\nhydrate_minutes = 600\nport = {port}\n[sim]\nstart_ns = {START}\nspeed = 600\n"
    )
    process = spawn(config_file, node_env(tmp_path / "data"))
    bar_type = "BTCUSDT.SIM-1-MINUTE-LAST-EXTERNAL"
    catalog = tmp_path / "data" / "catalog" / "external"
    try:
        wait_for(
            process,
            lambda: get(url + "/v2/hydration/BTCUSDT.SIM")[1]["items"][0]["state"] == "READY",
            "READY for BTCUSDT.SIM",
        )

        def durable() -> bool:
            assert get(url + "/v2/health")[0] == 200  # responsive while it writes
            return len(ParquetDataCatalog(str(catalog)).bars(bar_types=[bar_type])) >= 500

        wait_for(process, durable, "holding the hydrated bars in its catalog", seconds=30)
        closes = {int(bar.ts_event) for bar in ParquetDataCatalog(str(catalog)).bars(bar_types=[bar_type])}
        served = get(url + "/v2/bars?instrument_id=BTCUSDT.SIM&limit=5000")[1]["bars"]
        assert {int(bar["ts_event"]) for bar in served if int(bar["ts_event"]) <= max(closes)} == closes
    finally:
        stop(process)
