"""The gateway's watch over the job queue, with no worker at all: a RUNNING job whose worker
went silent is taken back by the gateway itself (requeued, then failed past its attempts);
health is degraded (``NO_LIVE_WORKER``) while jobs wait and no worker is alive, and recovers
when one says it is; the status lists the live workers and the queue's counts."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from gateways import template_gateway
from nodes import get, post
from screeners import ok

from reference.wire_validator import validate
from spine.jobs import Store

#: A silent worker is lost after this long (the gateway's worker_stale_secs, made short).
STALE_SECS = 2.0
WAIT_SECS = 30.0


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Store]]:
    directory = tmp_path_factory.mktemp("gateway")
    with (
        template_gateway(
            directory, f"worker_stale_secs = {STALE_SECS}\nqueue_watch_secs = 0.2\nworker_max_attempts = 2\n"
        ) as url,
        Store(f"sqlite:///{directory / 'spine.db'}") as store,
    ):
        yield url, store


def until(what: str, condition: Any) -> Any:
    deadline = time.monotonic() + WAIT_SECS
    while time.monotonic() < deadline:
        if value := condition():
            return value
        time.sleep(0.1)
    raise AssertionError(f"not {what} within {WAIT_SECS:g} s")


def health(url: str) -> dict[str, Any]:
    status, document = get(url + "/v2/health")
    assert status == 200, document
    validate(document)
    return document


def workers(url: str) -> dict[str, Any]:
    status, document = get(url + "/v2/status")
    assert status == 200, document
    validate(document)
    block: dict[str, Any] = document["workers"]
    return block


def test_a_silent_workers_job_is_taken_back_and_health_says_no_worker(stack: tuple[str, Store]) -> None:
    url, store = stack
    status, receipt = post(url + "/v2/backtests", {"strategy_id": "ema", "start": "0", "end": "1000"})
    assert status == 202, receipt
    job_id = receipt["job_id"]
    until("degraded", lambda: "NO_LIVE_WORKER" in health(url)["degraded_reasons"])
    assert health(url)["degraded"] is True

    # A worker claims it and dies at once: its heartbeat is older than the stale bound.
    long_ago = time.time_ns() - int(60e9)
    claimed = store.claim("ghost", long_ago)
    assert claimed is not None and claimed.job_id == job_id
    until("requeued by the gateway", lambda: ok(f"{url}/v2/backtests/{job_id}")["state"] == "QUEUED")
    events = ok(f"{url}/v2/backtests/{job_id}/events")["items"]
    assert [e["state"] for e in events if e["type"] == "STATE"] == ["QUEUED", "RUNNING", "QUEUED"]
    assert any(e["level"] == "WARNING" and "worker ghost lost during attempt 1 of 2" in e["message"] for e in events)

    assert store.claim("ghost", long_ago) is not None  # the second attempt is lost too: FAILED
    until("failed by the gateway", lambda: ok(f"{url}/v2/backtests/{job_id}")["state"] == "FAILED")
    block = until("counted", lambda: (b := workers(url))["reaped"] == 2 and b)
    assert block["live"] == [] and block["stale_ms"] == 2000 and block["checked_ts"] is not None


def test_health_recovers_when_a_worker_is_alive_and_status_lists_it(stack: tuple[str, Store]) -> None:
    url, store = stack
    status, receipt = post(url + "/v2/backtests", {"strategy_id": "ema", "start": "0", "end": "2000"})
    assert status == 202, receipt
    until("degraded", lambda: "NO_LIVE_WORKER" in health(url)["degraded_reasons"])
    assert workers(url)["queued"] >= 1

    started = time.time_ns()
    store.alive("test-worker", started, time.time_ns())
    block = until("listing the worker", lambda: (b := workers(url))["live"] and b)
    assert block["live"] == [
        {"worker_id": "test-worker", "started_ts": str(started), "seen_ts": block["live"][0]["seen_ts"]}
    ]
    assert "NO_LIVE_WORKER" not in health(url)["degraded_reasons"]

    store.gone("test-worker")  # it stopped: jobs wait with no worker again
    until("degraded again", lambda: "NO_LIVE_WORKER" in health(url)["degraded_reasons"])
    assert workers(url)["live"] == []
