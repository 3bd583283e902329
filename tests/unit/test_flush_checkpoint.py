"""A flush writes the catalogs and the series' state from one copy taken on the event loop
(``VenueNode.flush_off_loop``): bars that close while the worker thread writes reach neither
the catalog nor the state file until the next flush, so every durable bar keeps, across a
crash, the sequence it was served with."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import msgspec
import pytest
from nautilus_trader.model.data import Bar
from venue_nodes import T0, M, close, numbers, venue_node

from spine.node.config import NodeConfig
from spine.node.persist import series_state
from spine.node.persist.store import CatalogStore
from spine.node.service import VenueNode

IID = "BTCUSDT.SIM"


def close_both(node: VenueNode, minutes: range) -> None:
    for k in minutes:
        close(node, IID, "EXTERNAL", k)
        close(node, IID, "INTERNAL", k)


def durable_unknown(node: VenueNode) -> list[tuple[str, int]]:
    """Bars in the catalogs within the saved series' span whose sequence the state file does
    not hold (older bars are the catalog's retention, never served from the series)."""
    out = []
    for channel, store in node.stores.items():
        saved = series_state.load(Path(node.config.data_dir), channel).get(IID)
        known = set() if saved is None else set(saved.ts_event.tolist())
        oldest = min(known, default=0)
        for bar_type in store.bar_types():
            out += [
                (channel, int(b.ts_event))
                for b in store.load(bar_type)
                if int(b.ts_event) not in known and int(b.ts_event) >= oldest
            ]
    return out


def closing_during_the_write(node: VenueNode, monkeypatch: pytest.MonkeyPatch, k: int) -> list[int]:
    """Close INTERNAL bar ``k`` right after the EXTERNAL store wrote its first file (the loop
    goes on taking bars while the worker thread writes); the list records that it happened."""
    write = CatalogStore._staged
    closed: list[int] = []

    def staged(store: CatalogStore, data: list[Any]) -> Any:
        placed = write(store, data)
        if store is node.stores["EXTERNAL"] and data and isinstance(data[0], Bar) and not closed:
            closed.append(k)
            close(node, IID, "INTERNAL", k)
        return placed

    monkeypatch.setattr(CatalogStore, "_staged", staged)
    return closed


def test_a_bar_closing_while_the_flush_writes_waits_for_the_next_flush(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    node = venue_node(tmp_path)
    close_both(node, range(3))
    closed = closing_during_the_write(node, monkeypatch, 3)
    asyncio.run(node.flush_off_loop())
    assert closed == [3]
    assert durable_unknown(node) == []
    monkeypatch.undo()
    asyncio.run(node.flush_off_loop())  # the next flush takes it, in the catalog and the state
    assert durable_unknown(node) == []
    assert T0 + 3 * M in series_state.load(tmp_path, "INTERNAL")[IID].ts_event.tolist()


def test_a_consolidation_writes_the_series_as_it_was_taken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    node = venue_node(tmp_path, capacity=6)
    close_both(node, range(5))
    node.flush()
    close_both(node, range(5, 8))  # past capacity: the series holds 2..7, the files 0..7
    node.flush()
    closing_during_the_write(node, monkeypatch, 8)
    asyncio.run(node.flush_off_loop(consolidate=True))
    assert node.stores["INTERNAL"].counters.rewrites == 1
    assert durable_unknown(node) == []
    held = node.stores["INTERNAL"].load(f"{IID}-1-MINUTE-LAST-INTERNAL")
    assert [int(b.ts_event) for b in held] == [T0 + k * M for k in range(8)]  # the retention kept 0 and 1


def test_durable_bars_keep_their_numbers_across_a_crash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    node = venue_node(tmp_path)
    close_both(node, range(3))
    closed = closing_during_the_write(node, monkeypatch, 3)
    asyncio.run(node.flush_off_loop())
    monkeypatch.undo()
    assert closed == [3]
    served = numbers(node, IID, "INTERNAL")
    durable = {int(b.ts_event) for b in node.stores["INTERNAL"].load(f"{IID}-1-MINUTE-LAST-INTERNAL")}
    restarted = VenueNode(node.config)  # no final flush: the process died here
    again = numbers(restarted, IID, "INTERNAL")
    assert {ts: again[ts] for ts in durable} == {ts: served[ts] for ts in durable}


def test_a_crash_between_the_catalog_write_and_the_state_write_loses_no_number(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    live = tmp_path / "live"
    node = venue_node(live)
    for k in range(3):
        close(node, IID, "INTERNAL", k)
    node.flush()
    for k in range(3, 6):
        close(node, IID, "INTERNAL", k)
    served = numbers(node, IID, "INTERNAL")
    write = CatalogStore._staged
    crashed: list[Path] = []

    def staged(store: CatalogStore, data: list[Any]) -> Any:
        placed = write(store, data)
        if data and isinstance(data[0], Bar):  # the disk as a kill right after this file leaves it
            crashed.append(tmp_path / f"crash{len(crashed)}")
            shutil.copytree(live, crashed[-1])
        return placed

    monkeypatch.setattr(CatalogStore, "_staged", staged)
    node.flush()
    monkeypatch.undo()
    assert crashed
    for directory in crashed:
        restarted = VenueNode(msgspec.convert({"data_dir": str(directory)}, NodeConfig))
        assert durable_unknown(restarted) == []
        again = numbers(restarted, IID, "INTERNAL")
        assert len(again) == 6 and again == {ts: served[ts] for ts in again}
