"""The cancel flag stops a run promptly: the runtime polls it every CANCEL_POLL bars and
raises, the engine's run ends, and the run raises RunCancelled with its status documents
ending FAILED ``CANCELLED: ...``."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from backtest_support import ema_plan, node_catalog, run_spec

from spine.backtest import RunCancelled, run_backtest
from spine.backtest.runtime import CANCEL_POLL


def test_a_cancel_flag_set_up_front_stops_at_the_first_poll(tmp_path: Path) -> None:
    catalog = node_catalog(tmp_path, bars=5000)
    plan = ema_plan()
    polls: list[float] = []

    def cancelled() -> bool:
        polls.append(time.perf_counter())
        return True

    with pytest.raises(RunCancelled) as stopped:
        run_backtest(plan, run_spec(plan), [catalog], cancelled=cancelled, log=lambda level, message: None)
    assert len(polls) == 1
    statuses = [json.loads(s) for s in stopped.value.engine_status]
    assert [s["lifecycle"] for s in statuses] == ["STARTING", "RUNNING", "FAILED"]
    assert statuses[-1]["last_error"].startswith("CANCELLED: ")
    assert statuses[-1]["counters"]["bars_accepted"] == 5000


def test_a_cancel_mid_run_stops_it_at_the_next_poll(tmp_path: Path) -> None:
    """The flag turns true a third of the way in (as a job's cancel request is seen by the
    runner's throttled store poll): the run ends within one poll of it, having taken a third
    of the bars. (A flag set from another thread of the same process is seen as late as that
    thread gets the GIL, which the engine's loop hardly gives up: a worker cancels through the
    store poll, or ends the run's process.)"""
    catalog = node_catalog(tmp_path, bars=60_000)
    plan = ema_plan()
    polls: list[float] = []

    def cancelled() -> bool:
        polls.append(time.perf_counter())
        return len(polls) * CANCEL_POLL >= 20_000

    with pytest.raises(RunCancelled) as stopped:
        run_backtest(plan, run_spec(plan), [catalog], cancelled=cancelled, log=lambda level, message: None)
    assert time.perf_counter() - polls[-1] < 1.0
    assert len(polls) == -(-20_000 // CANCEL_POLL)
    last = json.loads(stopped.value.engine_status[-1])
    assert last["lifecycle"] == "FAILED" and 0 < last["counters"]["orders_submitted"]
