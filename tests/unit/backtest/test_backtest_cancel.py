"""The cancel flag stops a run promptly: the runtime polls it every CANCEL_POLL bars and
raises, the engine's run ends, and the run raises RunCancelled with its status documents
ending FAILED ``CANCELLED: ...``."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from backtest_support import ema_plan, node_catalog, run_spec
from spine.backtest import RunCancelled, run_backtest


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


def test_a_cancel_from_another_thread_stops_a_long_run_promptly(tmp_path: Path) -> None:
    catalog = node_catalog(tmp_path, bars=60_000)
    plan = ema_plan()
    flag = threading.Event()
    seen: dict[str, float] = {}

    def log(level: str, message: str) -> None:
        if "bars read" in message:  # the engine starts right after: cancel shortly into the run
            threading.Timer(0.3, flag.set).start()

    def cancelled() -> bool:
        if flag.is_set() and "at" not in seen:
            seen["at"] = time.perf_counter()
        return flag.is_set()

    started = time.perf_counter()
    with pytest.raises(RunCancelled):
        run_backtest(plan, run_spec(plan), [catalog], cancelled=cancelled, log=log)
    ended = time.perf_counter()
    assert ended - seen["at"] < 0.5, "the run went on after the flag was seen"
    assert ended - started < 10
