"""Point-in-time screens are admitted by :class:`spine.screener.admission.ScreenGate`: at most
``running`` at once and ``queued`` waiting; beyond that 503 SCREENS_BUSY with a Retry-After
header, before any work starts; the counters the screener's health reports."""

from __future__ import annotations

import asyncio

import pytest

from spine import schemas
from spine.http.errors import HttpError
from spine.screener.admission import ScreenGate

BOUND = 5.0  # seconds a readiness wait may take before the test fails


async def settle(gate: ScreenGate, running: int, queued: int) -> None:
    """Until the gate holds ``running`` and ``queued`` (bounded, failing)."""
    async with asyncio.timeout(BOUND):
        while (gate.running, gate.queued) != (running, queued):
            await asyncio.sleep(0)


def test_beyond_the_running_and_the_queued_a_screen_is_refused_without_starting() -> None:
    async def scenario() -> None:
        gate = ScreenGate(running=1, queued=1)
        release = asyncio.Event()
        started: list[int] = []

        async def work(k: int) -> int:
            started.append(k)
            await release.wait()
            return k

        first = asyncio.create_task(gate.run(lambda: work(1)))
        await settle(gate, 1, 0)
        second = asyncio.create_task(gate.run(lambda: work(2)))
        await settle(gate, 1, 1)
        with pytest.raises(HttpError) as refused:
            await gate.run(lambda: work(3))
        assert refused.value.symbol == "SCREENS_BUSY" and refused.value.status == 503
        assert "1 running and 1 waiting" in refused.value.text, refused.value.text
        assert dict(refused.value.headers)["retry-after"].isdigit()
        assert started == [1] and gate.refused == 1
        release.set()
        assert await asyncio.wait_for(asyncio.gather(first, second), BOUND) == [1, 2]
        assert started == [1, 2] and (gate.running, gate.queued, gate.completed) == (0, 0, 2)
        assert gate.total_nanos >= gate.last_nanos > 0

    asyncio.run(scenario())


def test_a_failed_screen_frees_its_place_and_counts() -> None:
    async def scenario() -> None:
        gate = ScreenGate(running=1, queued=0)

        async def fails() -> None:
            raise HttpError("UPSTREAM_UNAVAILABLE", "a node could not be read")

        with pytest.raises(HttpError):
            await gate.run(fails)
        assert (gate.running, gate.queued, gate.completed) == (0, 0, 1)
        assert await gate.run(lambda: asyncio.sleep(0, "again")) == "again"

    asyncio.run(scenario())


def test_a_cancelled_waiter_leaves_the_queue() -> None:
    async def scenario() -> None:
        gate = ScreenGate(running=1, queued=1)
        release = asyncio.Event()
        first = asyncio.create_task(gate.run(release.wait))
        await settle(gate, 1, 0)
        waiting = asyncio.create_task(gate.run(release.wait))
        await settle(gate, 1, 1)
        waiting.cancel()
        await settle(gate, 1, 0)
        release.set()
        await asyncio.wait_for(first, BOUND)
        assert (gate.running, gate.queued) == (0, 0)

    asyncio.run(scenario())


def test_the_health_block_validates_in_the_screeners_health() -> None:
    gate = ScreenGate(running=2, queued=4)
    health = {
        "version": "spine.v2",
        "schema_id": "svc.health",
        "schema_version": 1,
        "live": True,
        "ready": True,
        "degraded": False,
        "degraded_reasons": [],
        "engine_status": None,
        "ts_event": "1",
        "point_in_time_screens": gate.document(),
    }
    assert gate.document() == {
        "limit": 2,
        "queue": 4,
        "running": 0,
        "queued": 0,
        "completed": 0,
        "refused": 0,
        "last_nanos": None,
        "total_nanos": "0",
    }
    assert schemas.validator_for("svc.health").is_valid(health)


@pytest.mark.parametrize(("running", "queued"), [(0, 1), (1, -1)])
def test_bounds_outside_their_range_are_refused(running: int, queued: int) -> None:
    with pytest.raises(ValueError):
        ScreenGate(running=running, queued=queued)
