"""The screener's checkpoint (``spine.screener.checkpoint``): rows restored from it equal the
rows it was taken from, byte for byte at all seven resolutions; a restart that restores it and
reads only the node's bars above the watermark ends with the rows of a fresh full warm; a
failed write leaves the previous file; a corrupt file, or one of another format version or
feature registry, is ignored (a warning, then a full warm), never misread."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_features import MINUTE, make_bars

from spine._core import canonical_json
from spine.screener import checkpoint
from spine.screener.checkpoint import Checkpointer, Held, read, registry_identity, write
from spine.screener.feed import NodeFeed
from spine.screener.node_client import Bars
from spine.screener.rows import RESOLUTIONS, Rows

IID = "BTCUSDT.SIM"
NODE = "http://node.test:8700"
INSTRUMENT = {"instrument_id": IID, "price_precision": 2, "size_precision": 3}
COLUMNS = ("ts_event", "open", "high", "low", "close", "volume")
REGISTRY = registry_identity(None)


def node_bars(n: int, *, seed: int = 7, missing: tuple[int, ...] = ()) -> Bars:
    """The node's series: ``n`` minutes less ``missing``, numbered 1.. in close order."""
    cols = make_bars(seed, n)
    keep = np.setdiff1d(np.arange(n), np.array(missing, dtype=np.int64))
    bars = {k: np.ascontiguousarray(cols[k][keep]) for k in COLUMNS}
    bars["sequence"] = np.arange(1, len(keep) + 1, dtype=np.uint64)
    return bars


def part(bars: Bars, lo: int, hi: int) -> Bars:
    return {k: np.ascontiguousarray(v[lo:hi]) for k, v in bars.items()}


def observed(bars: Bars, upto: int) -> dict[str, Any]:
    """The node's coverage: observed from the first bar's open through bar ``upto - 1``."""
    ts = bars["ts_event"]
    return {"observed": [{"start": str(int(ts[0]) - MINUTE), "end": str(int(ts[upto - 1]))}]}


def fed_rows(bars: Bars, warm: int, live: int, channel: str = "EXTERNAL") -> Rows:
    """Rows warmed from the node's first ``warm`` bars, then ``live`` closes folded."""
    rows = Rows()
    rows.add(INSTRUMENT, channel)
    rows.warm(IID, part(bars, 0, warm), observed(bars, warm))
    if live:
        rows.close(IID, part(bars, warm, warm + live))
    return rows


def taken(rows: Rows, channel: str = "EXTERNAL") -> Held:
    bars, spans = rows.held(IID)
    return Held(NODE, INSTRUMENT, channel, rows.sequence.get(IID, 0), spans, bars)


def restored(held: Held) -> Rows:
    rows = Rows()
    rows.add(held.instrument, held.channel)
    rows.restore(IID, held.bars, held.spans, held.sequence or None)
    return rows


def documents(rows: Rows) -> list[bytes]:
    return [canonical_json(rows.row(IID, r)) for r in RESOLUTIONS]


# the file round trip


@pytest.mark.parametrize("channel", ["EXTERNAL", "INTERNAL"])
def test_restored_rows_equal_the_rows_taken_byte_for_byte(tmp_path: Path, channel: str) -> None:
    bars = node_bars(3_000, missing=(1_500, 1_501, 2_222))
    rows = fed_rows(bars, 2_000, 900, channel)
    path = tmp_path / "screener" / "checkpoint.arrow"
    write(path, [taken(rows, channel)], REGISTRY)
    [back] = read(path, REGISTRY)
    assert (back.node, back.instrument, back.channel, back.sequence) == (NODE, INSTRUMENT, channel, 2_900)
    again = restored(back)
    assert documents(again) == documents(rows)
    assert again.sequence == rows.sequence and again.newest == rows.newest


def test_an_instrument_without_bars_round_trips(tmp_path: Path) -> None:
    rows = Rows()
    rows.add(INSTRUMENT, "EXTERNAL")
    path = tmp_path / "checkpoint.arrow"
    write(path, [taken(rows)], REGISTRY)
    [back] = read(path, REGISTRY)
    assert back.sequence == 0 and back.spans == [] and all(len(v) == 0 for v in back.bars.values())


def test_a_missing_file_is_no_checkpoint(tmp_path: Path) -> None:
    assert read(tmp_path / "checkpoint.arrow", REGISTRY) == []


@given(
    n=st.integers(1, 400),
    warm=st.floats(0.05, 1.0),
    live=st.floats(0.0, 1.0),
    missing=st.lists(st.integers(0, 399), max_size=20),
    channel=st.sampled_from(["EXTERNAL", "INTERNAL"]),
)
def test_property_the_round_trip_restores_every_row(
    n: int, warm: float, live: float, missing: list[int], channel: str
) -> None:
    bars = node_bars(n, missing=tuple(m for m in missing if m < n - 1))
    first = max(1, int(len(bars["ts_event"]) * warm))
    rows = fed_rows(bars, first, int((len(bars["ts_event"]) - first) * live), channel)
    table = checkpoint.to_table([taken(rows, channel)], REGISTRY)
    [back] = checkpoint.from_table(table, REGISTRY)
    assert documents(restored(back)) == documents(rows)


# a restart: restore, then only the bars above the watermark


class FakeNode:
    """A node's instruments and bar pages (``page`` bars each) from in-memory columns."""

    def __init__(self, bars: Bars, page: int = 500) -> None:
        self.base_url, self.bars, self.page = NODE, bars, page

    async def instruments(self) -> list[dict[str, Any]]:
        return [INSTRUMENT]

    async def bar_pages(
        self, instrument: dict[str, Any], channel: str, after_sequence: int | None = None, end: int | None = None
    ) -> AsyncIterator[tuple[Bars, dict[str, Any]]]:
        keep = self.bars["sequence"] > (after_sequence if after_sequence is not None else -1)
        if end is not None:
            keep &= self.bars["ts_event"] <= end
        selected = {k: v[keep] for k, v in self.bars.items()}
        coverage = observed(self.bars, len(self.bars["ts_event"]))
        for start in range(0, max(1, len(selected["ts_event"])), self.page):
            yield part(selected, start, start + self.page), coverage


def warmed(node: FakeNode, saved: Held | None = None, channel: str = "EXTERNAL") -> tuple[Rows, NodeFeed]:
    rows = Rows()
    feed = NodeFeed(node, rows, channel=channel, concurrency=2, backoff=(0.01, 0.1))  # type: ignore[arg-type]
    if saved is not None:
        feed.saved = {IID: saved}
    asyncio.run(feed.warm())
    return rows, feed


@pytest.mark.parametrize("channel", ["EXTERNAL", "INTERNAL"])
def test_a_restart_from_the_checkpoint_equals_a_fresh_full_warm(tmp_path: Path, channel: str) -> None:
    bars = node_bars(4_000, missing=(1_000, 3_500, 3_501))
    before = fed_rows(bars, 2_500, 600, channel)  # the node has 3,997 bars by the restart
    path = tmp_path / "checkpoint.arrow"
    write(path, [taken(before, channel)], REGISTRY)
    [saved] = read(path, REGISTRY)
    fresh, full = warmed(FakeNode(bars), channel=channel)
    again, resumed = warmed(FakeNode(bars), saved, channel)
    assert resumed.resumed == 1 and full.resumed == 0
    assert documents(again) == documents(fresh)
    assert again.sequence == fresh.sequence == {IID: 3_997}
    assert (resumed.warm_pages, resumed.warm_bars) == (2, 3_997 - 3_100 + 1)
    assert (full.warm_pages, full.warm_bars) == (8, 3_997)
    assert resumed.held()[0].spans == full.held()[0].spans


def test_a_node_whose_sequences_went_back_is_warmed_in_full(caplog: pytest.LogCaptureFixture) -> None:
    bars = node_bars(1_200)
    saved = taken(fed_rows(bars, 1_000, 100))
    wiped = {**bars, "sequence": np.arange(1, 1_001, dtype=np.uint64)}  # renumbered, stopped short
    wiped = part(wiped, 0, 1_000)
    with caplog.at_level(logging.WARNING, "spine.screener"):
        rows, feed = warmed(FakeNode(wiped), saved)
    assert feed.resumed == 0 and "are not those checkpointed" in caplog.text
    assert documents(rows) == documents(warmed(FakeNode(wiped))[0])
    # Renumbered past the watermark: the bar at that number is another one.
    shifted = {**bars, "sequence": bars["sequence"] + np.uint64(5)}
    rows, feed = warmed(FakeNode(shifted), saved)
    assert feed.resumed == 0 and documents(rows) == documents(warmed(FakeNode(shifted))[0])


def test_changed_precisions_or_a_delisted_instrument_skip_the_checkpoint() -> None:
    bars = node_bars(300)
    saved = taken(fed_rows(bars, 200, 50))
    other = Held(NODE, {**INSTRUMENT, "price_precision": 3}, "EXTERNAL", saved.sequence, saved.spans, saved.bars)
    _, feed = warmed(FakeNode(bars), other)
    assert feed.resumed == 0 and feed.saved == {}
    gone = Held(NODE, {**INSTRUMENT, "instrument_id": "GONE.SIM"}, "EXTERNAL", 1, [], part(bars, 0, 1))
    rows = Rows()
    feed = NodeFeed(FakeNode(bars), rows, channel="EXTERNAL", concurrency=2, backoff=(0.01, 0.1))  # type: ignore[arg-type]
    feed.saved = {"GONE.SIM": gone}
    asyncio.run(feed.warm())
    assert feed.saved == {} and rows.ids == [IID] and [h.instrument_id for h in feed.held()] == [IID]


# what is never misread


def test_a_failed_write_leaves_the_previous_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "checkpoint.arrow"
    first = fed_rows(node_bars(500), 300, 100)
    write(path, [taken(first)], REGISTRY)
    original = path.read_bytes()

    def crash(handle: Any, table: Any) -> None:
        handle.write(b"ARROW1\0\0half a file")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(checkpoint, "_write_table", crash)
    with pytest.raises(OSError, match="No space left"):
        write(path, [taken(fed_rows(node_bars(500), 300, 150))], REGISTRY)
    assert path.read_bytes() == original and sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint.arrow"]
    assert documents(restored(read(path, REGISTRY)[0])) == documents(first)


def damaged(path: Path, how: str) -> None:
    data = bytearray(path.read_bytes())
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "garbage":
        path.write_bytes(b"not an arrow file at all")
    elif how == "empty":
        path.write_bytes(b"")
    else:  # one flipped byte inside the bars' values
        data[len(data) // 2] ^= 0x40
        path.write_bytes(bytes(data))


@pytest.mark.parametrize("how", ["truncated", "garbage", "empty", "flipped"])
def test_a_corrupt_file_is_ignored_with_a_warning(tmp_path: Path, how: str, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "checkpoint.arrow"
    write(path, [taken(fed_rows(node_bars(2_000), 1_500, 400))], REGISTRY)
    damaged(path, how)
    with caplog.at_level(logging.WARNING, "spine.screener"):
        assert read(path, REGISTRY) == []
    assert "is ignored" in caplog.text and "warms in full" in caplog.text


def test_another_registry_or_format_version_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "checkpoint.arrow"
    held = [taken(fed_rows(node_bars(300), 200, 50))]
    write(path, held, registry_identity(["sma_20", "rsi_14"]))
    with caplog.at_level(logging.WARNING, "spine.screener"):
        assert read(path, REGISTRY) == []
    assert "another feature registry" in caplog.text
    assert registry_identity(["sma_20", "rsi_14"]) != REGISTRY
    monkeypatch.setattr(checkpoint, "FORMAT_VERSION", 2)
    write(path, held, REGISTRY)
    monkeypatch.undo()
    caplog.clear()
    with caplog.at_level(logging.WARNING, "spine.screener"):
        assert read(path, REGISTRY) == []
    assert "format version '2', expected 1" in caplog.text


# the writer


def test_the_checkpointer_writes_one_at_a_time_and_knows_its_age(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    active, most, lock = [0], [0], threading.Lock()

    def slow(path: Path, held: list[Held], registry: str) -> None:
        with lock:
            active[0] += 1
            most[0] = max(most[0], active[0])
        time.sleep(0.05)
        with lock:
            active[0] -= 1

    monkeypatch.setattr(checkpoint, "write", slow)
    writer = Checkpointer(tmp_path / "checkpoint.arrow", REGISTRY)

    async def run() -> None:
        assert writer.age() is None
        cancelled = asyncio.create_task(writer.save([]))
        await asyncio.sleep(0.01)
        cancelled.cancel()  # its thread goes on; the next write waits for it
        results = await asyncio.gather(writer.save([]), writer.save([]), cancelled, return_exceptions=True)
        assert results[:2] == [True, True] and isinstance(results[2], asyncio.CancelledError)

    asyncio.run(run())
    assert most[0] == 1 and writer.age() is not None and 0 <= (writer.age() or -1) < 10**10


def test_a_failed_save_is_logged_and_keeps_the_age(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "screener").write_text("a file where the directory should be")
    writer = Checkpointer(tmp_path / "screener" / "checkpoint.arrow", REGISTRY)
    with caplog.at_level(logging.WARNING, "spine.screener"):
        assert asyncio.run(writer.save([])) is False
    assert writer.age() is None and "not written" in caplog.text
