"""The backtest queue, through real processes on loopback: a ``spine gateway``
(private-operator, SQLite) and ``spine worker`` processes with the real runner over one
catalog of ``SPINE_BENCH_QUEUE_BARS`` one-minute bars (default 20,000).

- eight jobs on two workers against one worker: the wall time from submitting eight EMA-cross
  template jobs over HTTP to the last one COMPLETED (workers started and idle beforehand);
  target (issue 27): two workers at least 1.7x one;
- submit-to-first-STATE: from ``POST /v2/backtests`` to the job's first ``state`` event on
  ``/v2/stream/backtests`` (QUEUED, written with the job), and to its RUNNING event (a worker
  claimed it: the workers poll every ``SPINE_WORKER_POLL_SECS``, default 0.05 s).

Smoke mode (CI): SPINE_BENCH_QUEUE_BARS=500 and --benchmark-disable.
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(ROOT / "tests" / "unit" / "backtest"))

from backtest_support import node_catalog  # noqa: E402
from nodes import get, post  # noqa: E402

from benches.backtest.stacks import stack  # noqa: E402

BARS = int(os.environ.get("SPINE_BENCH_QUEUE_BARS", "20000"))
JOBS = 8
TERMINAL = {"COMPLETED", "FAILED", "CANCELLED"}
WAIT_SECS = 600.0


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return node_catalog(tmp_path_factory.mktemp("queue-node"), bars=BARS)


def submit(gateway: str, label: str) -> str:
    status, receipt = post(gateway + "/v2/backtests", {"strategy_id": "queue", "label": label})
    assert status == 202, receipt
    return str(receipt["job_id"])


def wait_done(gateway: str, job_ids: list[str]) -> None:
    deadline = time.monotonic() + WAIT_SECS
    pending = set(job_ids)
    while pending:
        assert time.monotonic() < deadline, f"jobs not done within {WAIT_SECS} s: {pending}"
        for job_id in list(pending):
            state = get(gateway + f"/v2/backtests/{job_id}")[1]["state"]
            assert state not in {"FAILED", "CANCELLED"}, get(gateway + f"/v2/backtests/{job_id}")[1]
            if state == "COMPLETED":
                pending.discard(job_id)
        time.sleep(0.05)


@pytest.mark.parametrize("workers", [1, 2])
def test_eight_jobs(benchmark: BenchmarkFixture, catalog: Path, tmp_path: Path, workers: int) -> None:
    benchmark.group = f"backtest queue: {JOBS} EMA-cross jobs of {BARS} one-minute bars"
    with stack(tmp_path, catalog, workers) as gateway:
        rounds = iter(range(100))

        def eight() -> None:
            n = next(rounds)
            wait_done(gateway, [submit(gateway, f"r{n}-j{j}") for j in range(JOBS)])

        benchmark.pedantic(eight, rounds=1, iterations=1, warmup_rounds=0)
    benchmark.extra_info["workers"] = workers


def first_events(gateway: str, job_id: str, posted: float) -> dict[str, float]:
    """Seconds from ``posted`` to the job's first STATE event and to its RUNNING event."""
    seen: dict[str, float] = {}
    with urllib.request.urlopen(gateway + f"/v2/stream/backtests?job_id={job_id}", timeout=120) as response:
        for raw in response:
            line = raw.decode()
            if line.startswith("data: "):
                event: dict[str, Any] = json.loads(line[6:])
                if event["type"] == "STATE":
                    seen.setdefault("first_state", time.perf_counter() - posted)
                    if event["state"] == "RUNNING":
                        seen["running"] = time.perf_counter() - posted
                        return seen
    raise AssertionError(f"the stream of {job_id} ended before RUNNING")


def test_submit_to_first_state(benchmark: BenchmarkFixture, catalog: Path, tmp_path: Path) -> None:
    """Timed: from the POST to the RUNNING event seen on the stream; the first STATE event's
    delay is kept beside it. Each round starts with the worker idle."""
    benchmark.group = "backtest submit to first STATE and to RUNNING"
    samples: list[dict[str, float]] = []
    submitted: list[str] = []
    with stack(tmp_path, catalog, 1) as gateway:

        def once() -> None:
            posted = time.perf_counter()
            submitted.append(submit(gateway, f"latency-{len(submitted)}"))
            samples.append(first_events(gateway, submitted[-1], posted))

        benchmark.pedantic(once, setup=lambda: wait_done(gateway, submitted), rounds=5, iterations=1, warmup_rounds=1)
        wait_done(gateway, submitted)
    firsts = sorted(s["first_state"] for s in samples)
    running = sorted(s["running"] for s in samples)
    benchmark.extra_info["first_state_median_ms"] = round(firsts[len(firsts) // 2] * 1000, 2)
    benchmark.extra_info["running_median_ms"] = round(running[len(running) // 2] * 1000, 2)
