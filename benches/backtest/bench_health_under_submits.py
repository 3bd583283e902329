"""The gateway's ``GET /v2/health`` while ``SPINE_BENCH_SUBMITS`` (default 200) ``POST
/v2/backtests`` are in flight at once, through a real ``spine gateway`` (private-operator,
SQLite, no worker: the jobs stay QUEUED) on loopback.

Timed: one burst of submits, a health probe sent one after the other all the while; the probes'
median and maximum latency are kept beside it (``health_median_ms``, ``health_max_ms``), with
the probes of an idle gateway (``idle_health_median_ms``) for scale. Figures in
docs/performance.md.

Smoke mode (CI): SPINE_BENCH_SUBMITS=20 and --benchmark-disable.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest
from pytest_benchmark.fixture import BenchmarkFixture

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from gateways import spawn_gateway  # noqa: E402
from nodes import free_port, get, post, stop, wait_for  # noqa: E402

SUBMITS = int(os.environ.get("SPINE_BENCH_SUBMITS", "200"))
IDLE_PROBES = 50


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A gateway in front of nothing reachable, the ema_cross template saved as ``load``."""
    dead = f"http://127.0.0.1:{free_port()}"
    process, url = spawn_gateway(
        tmp_path_factory.mktemp("health-gateway"), [dead], dead, SPINE_DEPLOYMENT_MODE="private-operator"
    )
    try:
        wait_for(process, lambda: get(url + "/v2/health")[0] == 200, "answering")
        files = get(url + "/v2/strategy-templates/ema_cross")[1]["files"]
        status, _ = post(
            url + "/v2/strategies",
            {
                "version": "spine.v2",
                "schema_id": "svc.strategy_revision_save_request",
                "schema_version": 2,
                "strategy_id": "load",
                "parent_revision_id": None,
                "message": "",
                "files": files,
            },
        )
        assert status == 201
        yield url
    finally:
        stop(process)


async def probes(
    session: aiohttp.ClientSession, url: str, until: asyncio.Future[None] | None, count: int = 0
) -> list[float]:
    """Health latencies (seconds), one probe after the other, until ``until`` is done (or
    ``count`` probes); every answer must be 200."""
    latencies: list[float] = []
    while (until is not None and not until.done()) or len(latencies) < count:
        sent = time.perf_counter()
        async with session.get(url + "/v2/health") as response:
            await response.read()
            assert response.status == 200
        latencies.append(time.perf_counter() - sent)
    return latencies


async def burst(url: str, submits: int) -> tuple[list[float], list[int]]:
    """``submits`` POSTs at once and the health latencies while they are answered."""
    connector = aiohttp.TCPConnector(limit=submits + 1)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=300)) as session:

        async def submit(k: int) -> int:
            async with session.post(url + "/v2/backtests", json={"strategy_id": "load", "label": f"s{k}"}) as response:
                await response.read()
                return response.status

        posts = asyncio.ensure_future(asyncio.gather(*(submit(k) for k in range(submits))))
        latencies = await probes(session, url, posts)
        return latencies, await posts


def idle(url: str) -> list[float]:
    async def run() -> list[float]:
        async with aiohttp.ClientSession() as session:
            return await probes(session, url, None, IDLE_PROBES)

    return asyncio.run(run())


def test_health_while_submits_are_in_flight(benchmark: BenchmarkFixture, gateway: str) -> None:
    benchmark.group = f"gateway health during {SUBMITS} concurrent backtest submits"
    seen: list[float] = []

    def once() -> None:
        latencies, statuses = asyncio.run(burst(gateway, SUBMITS))
        assert statuses == [202] * SUBMITS, sorted(set(statuses))
        seen.extend(latencies)

    benchmark.pedantic(once, rounds=3, iterations=1, warmup_rounds=0)
    quiet = idle(gateway)
    benchmark.extra_info["health_probes"] = len(seen)
    benchmark.extra_info["health_median_ms"] = round(statistics.median(seen) * 1000, 2)
    benchmark.extra_info["health_max_ms"] = round(max(seen) * 1000, 2)
    benchmark.extra_info["idle_health_median_ms"] = round(statistics.median(quiet) * 1000, 2)
