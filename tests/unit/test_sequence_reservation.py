"""A restarted node never hands out a sequence number it may have served before: every number
is covered by a reservation made durable before the number is handed out, and after a crash
every series continues above it (``spine.node.persist.sequences``, ``Series(reserve=...)``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import msgspec
import numpy as np
import pytest
from venue_nodes import T0, M, close, discovered, numbers, venue_node

from spine._core import Series
from spine.node.config import NodeConfig
from spine.node.service import VenueNode

CHANNELS = ("EXTERNAL", "INTERNAL")


def hydrate(node: VenueNode, instrument_id: str, count: int) -> None:
    """A history answer bulk loaded into the EXTERNAL series, as hydration loads it."""
    ts = (T0 + np.arange(1_000, 1_000 + count, dtype=np.uint64) * M).astype(np.uint64)
    ones = np.ones(count, np.int64)
    node.book.series(instrument_id, "EXTERNAL").extend(ts, ones, ones, ones, ones, ones)


def crash(live: Path, at: Path) -> VenueNode:
    """A node restarted on what ``live``'s disk holds at this instant (the process killed)."""
    shutil.copytree(live, at)
    return discovered(VenueNode(msgspec.convert({"data_dir": str(at)}, NodeConfig)))


def highest(node: VenueNode) -> int:
    return max((s.last_sequence for _, _, s in node.book.held()), default=0)


def test_a_restart_after_a_crash_numbers_only_above_every_number_served(tmp_path: Path) -> None:
    node = venue_node(tmp_path / "live")
    for k in range(5):
        for channel in CHANNELS:
            close(node, "BTCUSDT.SIM", channel, k)
    node.flush()  # periodic: catalog and state hold bars 0..4
    for k in range(5, 9):  # served, then the process dies before the next flush
        for channel in CHANNELS:
            close(node, "BTCUSDT.SIM", channel, k)
    close(node, "ETHUSDT.SIM", "INTERNAL", 0)  # a series none of whose bars became durable
    served = highest(node)
    restarted = crash(tmp_path / "live", tmp_path / "crashed")
    for channel in CHANNELS:
        before, after = numbers(node, "BTCUSDT.SIM", channel), numbers(restarted, "BTCUSDT.SIM", channel)
        assert after == {ts: before[ts] for ts in after} and len(after) == 5  # the durable bars keep theirs
        assert close(restarted, "BTCUSDT.SIM", channel, 9) > served
    assert close(restarted, "ETHUSDT.SIM", "INTERNAL", 1) > served
    hydrate(restarted, "ETHUSDT.SIM", 5_000)
    assert min(numbers(restarted, "ETHUSDT.SIM", "EXTERNAL").values()) > served


def test_every_number_handed_out_is_reserved_on_disk_first(tmp_path: Path) -> None:
    """Crash at several instants (no flush at all): each restart numbers above what was served."""
    live = tmp_path / "live"
    node = venue_node(live)
    steps = [
        lambda: close(node, "BTCUSDT.SIM", "INTERNAL", 0),
        lambda: hydrate(node, "BTCUSDT.SIM", 5_000),
        lambda: [close(node, "ETHUSDT.SIM", "EXTERNAL", k) for k in range(3)],
    ]
    for n, step in enumerate(steps):
        step()
        served = highest(node)
        restarted = crash(live, tmp_path / f"crash{n}")
        for instrument_id in ("BTCUSDT.SIM", "ETHUSDT.SIM"):
            for channel in CHANNELS:
                assert close(restarted, instrument_id, channel, 10_000) > served


def test_a_clean_stop_continues_numbering_where_it_stopped(tmp_path: Path) -> None:
    node = venue_node(tmp_path)
    for k in range(5):
        close(node, "BTCUSDT.SIM", "INTERNAL", k)
    node.flush(final=True)
    restarted = discovered(VenueNode(node.config))
    assert numbers(restarted, "BTCUSDT.SIM", "INTERNAL") == numbers(node, "BTCUSDT.SIM", "INTERNAL")
    assert close(restarted, "BTCUSDT.SIM", "INTERNAL", 5) == 6


def test_a_series_asks_its_reserve_before_numbering_above_the_grant() -> None:
    asked: list[int] = []

    def reserve(top: int) -> int:
        asked.append(top)
        return top + 2

    series = Series(channel="INTERNAL", price_precision=2, size_precision=0, reserve=reserve)
    for minute in range(1, 5):
        series.push(T0 + minute * M, 1, 1, 1, 1, 1)
    assert asked == [1, 4]  # granted 3, then 6
    ts = T0 + np.arange(10, 20, dtype=np.uint64) * M
    series.extend(ts, *(np.ones(10, np.int64),) * 5)
    assert asked == [1, 4, 14] and series.last_sequence == 14


def test_a_failing_reserve_takes_no_number() -> None:
    def full(top: int) -> int:
        raise OSError("no space left on device")

    series = Series(channel="INTERNAL", price_precision=2, size_precision=0, reserve=full)
    with pytest.raises(OSError, match="no space"):
        series.push(T0, 1, 1, 1, 1, 1)
    assert len(series) == 0 and series.last_sequence == 0
