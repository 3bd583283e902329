"""The worker child's entry point: ``spine.backtest.job.run`` runs the job's request as it was
resolved at submit (a row stored before requests carried their plan is planned from its
revision), records the execution block when the engine starts, forwards log lines and status
documents to the store as they come, polls the cancel request (throttled) and stores every
output part."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from backtest_support import IID, node_catalog

from spine.backtest import RunCancelled
from spine.backtest.job import run
from spine.jobs.request import BacktestRequest, ExecutionConfig, ResolvedRun, SealedBody, encode
from spine.strategies.document import plan
from spine.strategies.templates import template_files
from spine.wire.outputs import OutputPart


class FakeStore:
    """The store's methods a run calls, over one revision (the EMA-cross template on IID)."""

    def __init__(self, cancel: bool = False) -> None:
        self.files = {path: text.replace("BTCUSDT.SIM", IID) for path, text in template_files("ema_cross").items()}
        self.cancel, self.polls = cancel, 0
        self.logs: list[tuple[str, str]] = []
        self.execution: str | None = None
        self.parts: dict[str, list[bytes]] = {}

    def revision_texts(self, strategy_id: str, revision_id: str) -> Mapping[str, str]:
        return dict(self.files)

    def job(self, job_id: str) -> Any:
        self.polls += 1
        return SimpleNamespace(cancel_requested=self.cancel)

    def append_event(
        self, job_id: str, type: str, state: str | None, level: str | None, message: str | None, ts: int
    ) -> int:
        assert type == "LOG" and state is None and level and message
        self.logs.append((level, message))
        return len(self.logs)

    def set_execution(self, job_id: str, execution: str) -> None:
        self.execution = execution

    def put_outputs(self, job_id: str, parts: Mapping[str, Sequence[bytes]]) -> None:
        self.parts |= {part: list(bodies) for part, bodies in parts.items()}


def job(parameters: dict[str, str] | None = None) -> dict[str, Any]:
    """A job as the gateway submits it (spine.jobs.submission): the request holds the sealed
    body, the resolved run, the config hash, the configured execution block and the plan."""
    planned = plan(FakeStore().files, parameters or {})
    request = BacktestRequest(
        body=SealedBody(strategy_id="ema_cross", parameters=parameters or None),
        spec=ResolvedRun(
            strategy_id="ema_cross",
            revision_id="b" * 64,
            instrument_id=None,
            start="0",
            end=str(2**62),
            resolution="5m",
            channel="EXTERNAL",
            values=planned.values,
        ),
        config_hash="c" * 64,
        execution=ExecutionConfig(capital="25000", seed=7),
        plan=planned,
    )
    return {
        "job_id": "a" * 64,
        "strategy_id": "ema_cross",
        "revision_id": "b" * 64,
        "instrument_id": None,
        "start": 0,
        "end": 2**62,
        "request": encode(request),
        "state": "RUNNING",
    }


def test_a_job_runs_and_stores_every_part(tmp_path: Path) -> None:
    catalog = node_catalog(tmp_path, bars=2000)
    store = FakeStore()
    run_id = run(job({"fast": "5"}), "sqlite:///unused", [str(catalog)], store=store)
    assert set(store.parts) == set(OutputPart)
    report = json.loads(store.parts["report"][0])
    assert report["run_id"] == run_id and json.loads(store.execution or "null") == report["execution"]
    assert report["execution"] == {
        "capital": "25000",
        "currency": "USDT",
        "fee_model": "MAKER_TAKER",
        "fill_model": "FILL_MODEL",
        "seed": 7,
    }
    assert report["config_hash"] == "c" * 64
    assert {json.loads(s)["resolution"] for s in store.parts["signals"]} == {"5m"}
    assert [json.loads(s)["lifecycle"] for s in store.parts["engine_status"]] == ["STARTING", "RUNNING", "COMPLETED"]
    assert any("bars read" in message for _, message in store.logs)
    assert 1 <= store.polls < 2000 // 64  # throttled: one store query per interval at most
    default = FakeStore()
    assert run(job(), "sqlite:///unused", [str(catalog)], store=default) != run_id  # other parameter values


def test_a_cancel_request_stops_the_job(tmp_path: Path) -> None:
    catalog = node_catalog(tmp_path, bars=2000)
    store = FakeStore(cancel=True)
    with pytest.raises(RunCancelled):
        run(job(), "sqlite:///unused", [str(catalog)], store=store)
    assert json.loads(store.parts["engine_status"][-1])["lifecycle"] == "FAILED"
    # The worker logs the run's public reason as it ends the job; the run itself does not.
    assert "report" not in store.parts and all(level != "ERROR" for level, *_ in store.logs)


def test_a_row_stored_before_requests_carried_their_plan_runs_alike(tmp_path: Path) -> None:
    """Such a row is planned from its revision at its sealed parameters: the same run, the
    same run id and result hash as the row the gateway stores now."""
    catalog = node_catalog(tmp_path, bars=2000)
    current = job({"fast": "5"})
    stored = json.loads(current["request"])
    del stored["plan"]
    old = current | {"request": json.dumps(stored)}
    runs = []
    for row in (current, old):
        store = FakeStore()
        run(row, "sqlite:///unused", [str(catalog)], store=store)
        runs.append(json.loads(store.parts["report"][0]))
    assert runs[0]["run_id"] == runs[1]["run_id"] and runs[0]["result_hash"] == runs[1]["result_hash"]
