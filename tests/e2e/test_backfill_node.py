"""Weeks of history on the accelerated simulated venue: the series serves the newest
``capacity`` minutes while the EXTERNAL catalog is backfilled below them to the retention, a
day per request, with exactly the venue's candles (an independent ``SimMarket`` of the same
seed is the reference); a backtest's reader sees the whole catalog; a restart continues the
backfill below the oldest durable close and reloads only what the series served."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import msgspec
import pytest

from spine.backtest.bars import minute_columns
from spine.node.backfill import Backfill
from spine.node.config import ConfigError, NodeConfig, load_config
from spine.node.hydrator import Answer
from spine.node.service import VenueNode
from spine.node.sim.client import sim_market

START = 29_000_000 * 60 * 10**9
MINUTE = 60 * 10**9
IID = "BTCUSDT.SIM"
BAR_TYPE = f"{IID}-1-MINUTE-LAST-EXTERNAL"


def settings(data_dir: Path, start_ns: int = START, retention_days: float = 1.0) -> NodeConfig:
    return msgspec.convert(
        {
            "data_dir": str(data_dir),
            "flush_secs": 0.3,
            "capacity": 100,
            "hydrate_minutes": 100,
            "retention_days": retention_days,
            "sim": {"start_ns": start_ns, "speed": 60, "spot": 2, "perpetuals": 0, "option_expiries": 0},
        },
        NodeConfig,
    )


async def run_until(node: VenueNode, done: Any, seconds: float) -> None:
    """Run ``node`` until ``done()`` holds (polled), at most ``seconds``."""
    stop = asyncio.Event()

    async def watch() -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while loop.time() < deadline and not done():
            await asyncio.sleep(0.2)
        stop.set()

    watcher = asyncio.get_running_loop().create_task(watch())
    await node.run(stop)
    await watcher


def reference_closes(node: VenueNode, start: int, end: int) -> list[int]:
    """The venue's candles closing in ``(start, end]``, from a market of the same seed."""
    client = node.clients[0]
    market = sim_market(client._sim, client._instruments)  # a market of its own, same seed
    index = next(k for k, i in enumerate(client._instruments) if str(i.id) == IID)
    return [c.ts_event for c in market.candles(index, start, end)]


def test_the_catalog_is_backfilled_to_the_retention_below_the_served_window(tmp_path: Path) -> None:
    node = VenueNode(settings(tmp_path))
    store = node.stores["EXTERNAL"]
    day = 1_440 * MINUTE

    def deep() -> bool:
        oldest, newest = store.oldest_close(BAR_TYPE), store._last.get(BAR_TYPE)
        return oldest is not None and newest is not None and oldest <= newest - day + 30 * MINUTE

    asyncio.run(run_until(node, deep, 60.0))
    assert deep(), (store.oldest_close(BAR_TYPE), store._last.get(BAR_TYPE))
    series = node.book.series(IID, "EXTERNAL")
    assert len(series) == 100  # the window served is the capacity's
    held = [b.ts_event for b in store.load(BAR_TYPE)]
    newest = store.last_close(BAR_TYPE)
    assert newest is not None and held[-1] == newest and held == sorted(set(held))
    assert held[0] > newest - day - MINUTE  # never past the retention
    # Every close the venue's history holds over the span is durable, and nothing else.
    assert held == reference_closes(node, held[0] - MINUTE, newest)
    # A backtest reads the whole retained catalog, not the served window.
    p = node.book.precision(IID)
    columns = minute_columns(store.root, BAR_TYPE, p.price, p.size, None, None)
    assert columns["ts_event"].tolist() == held
    assert node.backfill is not None and node.backfill.written > 1_000

    # A restart reloads only what the series served, then continues below the oldest close.
    served = (series.page(limit=5000), series.last_sequence)
    again = VenueNode(settings(tmp_path, retention_days=2.0))
    reloaded = again.book.series(IID, "EXTERNAL")
    assert (reloaded.page(limit=5000), reloaded.last_sequence) == served
    oldest = store.oldest_close(BAR_TYPE)
    assert oldest is not None

    def deeper() -> bool:
        below = again.stores["EXTERNAL"].oldest_close(BAR_TYPE)
        return below is not None and below < oldest - 600 * MINUTE

    asyncio.run(run_until(again, deeper, 60.0))
    assert deeper()
    held = [b.ts_event for b in again.stores["EXTERNAL"].load(BAR_TYPE)]
    assert held == sorted(set(held)) and held == reference_closes(again, held[0] - MINUTE, held[-1])


class _Source:
    def __init__(self, answers: list[Answer]) -> None:
        self.answers, self.asked = answers, []

    async def fetch(self, instrument_id: str, start_ns: int, end_ns: int) -> Answer:
        self.asked.append((start_ns, end_ns))
        return self.answers.pop(0) if self.answers else Answer("history")


class _Store:
    def __init__(self, oldest: int | None, newest: int | None) -> None:
        self.oldest, self.newest, self.written = oldest, newest, []

    def oldest_close(self, bar_type: str) -> int | None:
        return self.oldest

    def last_close(self, bar_type: str) -> int | None:
        return self.newest

    def write_older(self, bar_type: str, bars: list[Any]) -> int:
        self.written.append(bars)
        return len(bars)


def test_a_backfill_asks_a_day_at_a_time_down_to_the_retention_and_stops_at_a_refusal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("spine.node.backfill.DURABLE_WAIT_SECS", 0.0)
    day = 1_440 * MINUTE
    newest = START + 10 * day
    store = _Store(oldest=newest - 100 * MINUTE, newest=newest)
    source = _Source([])
    asyncio.run(Backfill(store, source, retention_ns=3 * day, duty=1.0).run([IID]))  # type: ignore[arg-type]
    top = newest - 101 * MINUTE
    floor = newest - 3 * day
    assert source.asked == [(top - day, top), (top - 2 * day, top - day), (floor, top - 2 * day)]

    refused = _Source([Answer("history", ["bar"]), Answer("transient", error="timed out")])
    store = _Store(oldest=newest, newest=newest)
    asyncio.run(Backfill(store, refused, retention_ns=3 * day, duty=1.0).run([IID]))  # type: ignore[arg-type]
    assert len(refused.asked) == 2 and store.written == [["bar"]]

    nothing = _Source([])
    asyncio.run(Backfill(_Store(None, None), nothing, retention_ns=day, duty=1.0).run([IID]))  # type: ignore[arg-type]
    assert nothing.asked == []  # nothing durable to continue below


@pytest.mark.parametrize("days", ["0", "-1", "3651", "nan"])
def test_a_retention_outside_its_range_is_refused(tmp_path: Path, days: str) -> None:
    file = tmp_path / "node.toml"
    file.write_text(f"retention_days = {days}\n")
    with pytest.raises(ConfigError, match=r"retention_days .*allowed above 0, at most 3650"):
        load_config(str(file), {})
    with pytest.raises(ConfigError, match="retention_days"):
        load_config(None, {"SPINE_RETENTION_DAYS": days})
    assert load_config(None, {"SPINE_RETENTION_DAYS": "0.5"}).retention_days == 0.5
