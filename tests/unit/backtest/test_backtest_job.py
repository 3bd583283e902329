"""The worker child's entry point: ``spine.backtest.job.run`` decodes the job, forwards logs
and status documents to the store as they come, polls the cancel request (throttled) and
saves the outputs."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from backtest_support import ema_plan, node_catalog, run_spec
from spine.backtest import RunCancelled, RunOutputs
from spine.backtest.job import run


class FakeStore:
    def __init__(self, cancel: bool = False) -> None:
        self.cancel, self.polls = cancel, 0
        self.logs: list[tuple[str, str, str]] = []
        self.statuses: list[bytes] = []
        self.saved: dict[str, RunOutputs] = {}

    def cancel_requested(self, job_id: str) -> bool:
        self.polls += 1
        return self.cancel

    def append_log(self, job_id: str, level: str, message: str) -> None:
        self.logs.append((job_id, level, message))

    def append_status(self, job_id: str, document: bytes) -> None:
        self.statuses.append(document)

    def save_outputs(self, job_id: str, outputs: RunOutputs) -> None:
        self.saved[job_id] = outputs


def job() -> dict[str, object]:
    plan = ema_plan()
    return {"plan": msgspec.to_builtins(plan), "spec": msgspec.to_builtins(run_spec(plan))}


def test_a_job_runs_and_saves_its_outputs(tmp_path: Path) -> None:
    catalog = node_catalog(tmp_path, bars=2000)
    store = FakeStore()
    run_id = run(job(), "sqlite:///unused", [str(catalog)], store=store)
    saved = store.saved["a" * 64]
    assert saved.run_id == run_id
    assert [json.loads(s)["lifecycle"] for s in store.statuses] == ["STARTING", "RUNNING", "COMPLETED"]
    assert any("bars read" in message for _, _, message in store.logs)
    assert 1 <= store.polls < 2000 // 64  # throttled to one store query per interval


def test_a_cancel_request_stops_the_job(tmp_path: Path) -> None:
    catalog = node_catalog(tmp_path, bars=2000)
    store = FakeStore(cancel=True)
    with pytest.raises(RunCancelled):
        run(job(), "sqlite:///unused", [str(catalog)], store=store)
    assert json.loads(store.statuses[-1])["lifecycle"] == "FAILED" and not store.saved
