"""A stop in the middle of the first hydration (issue 23, item 1): a series that was not READY
at the stop asks for its whole history window after a restart, not only the gap above its
live bars, and takes the older bars into the series and the catalog without overlap."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest

from spine.node.config import NodeConfig
from spine.node.hydration import HydrationBook
from spine.node.hydrator import Answer, HistorySource, SimHistory
from spine.node.service import VenueNode

START = 29_000_000 * 60 * 10**9
MINUTE = 60 * 10**9
WINDOW = 60
#: A retry that never comes within a run (venue nanoseconds: about a venue year).
NEVER = 10**16


class Scripted:
    """The simulated venue's history, except that the first instrument asked is refused
    (transient), the second answered, the third never answered: the stop then finds them in
    RETRY_WAIT, READY and HYDRATING, and every later one still EMPTY."""

    def __init__(self, inner: HistorySource) -> None:
        self.inner = inner
        self.order: list[str] = []

    async def fetch(self, instrument_id: str, start_ns: int, end_ns: int) -> Answer:
        if instrument_id not in self.order:
            self.order.append(instrument_id)
        position = self.order.index(instrument_id)
        if position == 0:
            return Answer("transient", error="scripted refusal")
        if position == 2:
            await asyncio.Event().wait()  # held until the stop cancels it
        return await self.inner.fetch(instrument_id, start_ns, end_ns)


def settings(data_dir: Path, start_ns: int) -> NodeConfig:
    return msgspec.convert(
        {
            "data_dir": str(data_dir),
            "flush_secs": 0.3,
            "hydrate_minutes": WINDOW,
            "sim": {"start_ns": start_ns, "speed": 600, "spot": 4, "perpetuals": 2, "option_expiries": 0},
        },
        NodeConfig,
    )


async def run(node: VenueNode, seconds: float) -> None:
    stop = asyncio.Event()
    asyncio.get_running_loop().call_later(seconds, stop.set)
    await node.run(stop)


def closes(series: Any) -> np.ndarray:
    return np.frombuffer(series.columns()["ts_event"], "<u8")


def test_a_stop_in_each_unfinished_hydration_state_hydrates_the_whole_window_after_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scripted: list[Scripted] = []

    def source(self: VenueNode, client: Any) -> HistorySource:
        scripted.append(Scripted(SimHistory(client)))
        return scripted[-1]

    with monkeypatch.context() as patch:
        patch.setattr(VenueNode, "_history_source", source)
        first = VenueNode(settings(tmp_path, START))
        first.hydration = HydrationBook(base_ns=NEVER, cap_ns=NEVER)
        asyncio.run(run(first, 3.0))
    (script,) = scripted
    waiting, ready, hanging = script.order[:3]
    empty = [iid for iid in first.actor.ingested if iid not in script.order]
    states = {iid: first.hydration.state(iid) for iid in first.actor.ingested}
    assert states[waiting] == "RETRY_WAIT" and states[ready] == "READY" and states[hanging] == "HYDRATING"
    assert empty and all(states[iid] == "EMPTY" for iid in empty)
    unfinished = [waiting, hanging, *empty]
    first_live = {iid: int(closes(first.book.series(iid, "EXTERNAL"))[0]) for iid in unfinished}
    assert all(len(first.book.series(iid, "EXTERNAL")) > 5 for iid in unfinished)  # live bars held
    newest = {iid: first.book.series(iid, "EXTERNAL").resume_hint()["newest_ts_event"] for iid in states}

    restart = max(newest.values()) + 5 * MINUTE
    second = VenueNode(settings(tmp_path, restart))
    asyncio.run(run(second, 3.0))
    asked = {}
    for iid, start, end in second.hydrator.requests:
        asked.setdefault(iid, (start, end))
    assert asked[ready][0] == newest[ready]  # READY at the stop: only the gap above its close
    for iid in unfinished:
        start, end = asked[iid]
        assert end - start == WINDOW * MINUTE, iid  # the whole window, not the gap
        assert second.hydration.state(iid) == "READY"
        held = closes(second.book.series(iid, "EXTERNAL"))
        assert int(held[0]) < first_live[iid] - 10 * MINUTE, iid  # history older than the live bars
        bar_type = f"{iid}-1-MINUTE-LAST-EXTERNAL"
        stored = [int(b.ts_event) for b in second.stores["EXTERNAL"].load(bar_type)]
        assert stored == sorted(set(stored)), iid  # rewritten, never overlapping
        assert stored[0] < first_live[iid] - 10 * MINUTE, iid
