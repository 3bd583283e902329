"""The gateway's job watch: however many streams wait, one tick is one query; a waiter wakes
when its job moves past what it has read, or at once on this process's own write."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from spine.gateway.job_streams import JobStreams


def test_one_query_per_tick_wakes_only_the_streams_behind() -> None:
    asked: list[list[str]] = []
    positions = {"a": (3, "RUNNING"), "b": (7, "COMPLETED")}

    def look(job_ids: Sequence[str]) -> dict[str, tuple[int, str]]:
        asked.append(sorted(job_ids))
        return {job_id: positions[job_id] for job_id in job_ids if job_id in positions}

    async def scenario() -> None:
        watch = JobStreams(look, poll_secs=3600, limit=200)  # ticks driven by hand below
        with watch.watching("a") as first:
            await asyncio.sleep(0)  # the poller's own first tick
            asked.clear()
            waiters = [watch.watching("a" if n % 2 else "b") for n in range(150)]
            entered = [w.__enter__() for w in waiters]
            for waiter in (first, *entered):
                waiter.known, waiter.state = positions[waiter.job_id]
                waiter.moved = False
            await watch.tick()
            assert asked == [["a", "b"]]  # 151 streams, one query
            assert not any(w.moved for w in (first, *entered))
            positions["a"] = (4, "RUNNING")
            await watch.tick()
            assert len(asked) == 2
            assert all(w.moved == (w.job_id == "a") for w in (first, *entered))
            assert {w.state for w in entered if w.job_id == "b"} == {"COMPLETED"}
            watch.notify("b")
            assert all(w.moved for w in entered)
            assert watch.open == 151 and watch.full() is False
            for waiter in waiters:
                waiter.__exit__(None, None, None)
        assert watch.open == 0
        await watch.tick()
        assert len(asked) == 2  # nobody waits: no query
        await watch.aclose()

    asyncio.run(scenario())


def test_the_cap_counts_refusals() -> None:
    async def scenario() -> None:
        watch = JobStreams(lambda ids: {}, poll_secs=3600, limit=1)
        with watch.watching("a"):
            assert watch.full() and watch.refused == 1
        assert not watch.full()
        await watch.aclose()

    asyncio.run(scenario())
