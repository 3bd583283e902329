"""A backtest through a real ``spine worker`` with the real runner (``spine.backtest.job:run``)
on a SQLite store and a node catalog dir: the job completes with its run id, the execution
block read back, every output part stored and each document valid against its schema."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import referencing
from jsonschema import Draft202012Validator
from referencing.jsonschema import DRAFT202012
from workers import FAST, WAIT_SECS, clean_environ, wait_until, worker_argv

from jobs_helpers import save
from spine.http.bodies import BacktestBody
from spine.jobs import Store, documents
from spine.jobs.request import ExecutionConfig
from spine.jobs.submission import build_request, submit_request
from spine.strategies.templates import template_files

ROOT = Path(__file__).resolve().parents[2]
LOADED = {p.name: json.loads(p.read_bytes()) for p in (ROOT / "schemas").glob("*.json")}
REGISTRY = referencing.Registry().with_resources((s["$id"], DRAFT202012.create_resource(s)) for s in LOADED.values())
IID = "C000USDT.SIM"
MINUTE = 60_000_000_000


def valid(schema: str, document: object) -> list[str]:
    return [e.message for e in Draft202012Validator(LOADED[f"{schema}.json"], registry=REGISTRY).iter_errors(document)]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(f"sqlite:///{tmp_path}/spine.db") as opened:
        yield opened


def test_a_backtest_job_completes_in_a_worker(tmp_path: Path, store: Store) -> None:
    sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "unit" / "backtest")]
    try:
        from backtest_support import node_catalog

        from reference.backtest_catalog import EPOCH_2024
    finally:
        del sys.path[:2]
    catalog = node_catalog(tmp_path, bars=3000)
    files = {path: text.replace("BTCUSDT.SIM", IID) for path, text in template_files("ema_cross").items()}
    revision = save(store, None, "template", files)
    start, end = EPOCH_2024, EPOCH_2024 + 2000 * MINUTE
    body = BacktestBody(strategy_id="ema_cross", parameters={"fast": "5"}, start=str(start), end=str(end))
    request = build_request(body, revision.revision_id, files, ExecutionConfig(capital="100000", seed=42), 1)
    job = submit_request(store, request, "test", 1)
    env = clean_environ() | FAST | {"SPINE_WORKER_RUNNER": "spine.backtest.job:run"}
    with open(tmp_path / "w1.log", "ab") as log:
        worker = subprocess.Popen(
            worker_argv(store.url, [catalog], "w1"),
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until(lambda: store.job(job.job_id).state in ("COMPLETED", "FAILED", "CANCELLED"), "job ended")
    except AssertionError:
        raise AssertionError((tmp_path / "w1.log").read_text()[-4000:]) from None
    finally:
        worker.terminate()
        worker.wait(timeout=WAIT_SECS)
    done = store.job(job.job_id)
    assert done.state == "COMPLETED", (done.last_error, (tmp_path / "w1.log").read_text()[-4000:])
    assert valid("svc.backtest_job_detail", documents.detail(done)) == []
    report = json.loads(store.outputs(job.job_id, "report")[0])
    assert valid("svc.backtest_run_result", report) == []
    assert report["run_id"] == done.run_id and json.loads(done.execution or "null") == report["execution"]
    assert (report["start"], report["end"]) == (str(start), str(end))
    fills = [json.loads(f) for f in store.outputs(job.job_id, "fills")]
    assert fills and all(start < int(f["ts_event"]) <= end for f in fills)
    statuses = [json.loads(s) for s in store.outputs(job.job_id, "engine_status")]
    assert [s["lifecycle"] for s in statuses] == ["STARTING", "RUNNING", "COMPLETED"]
    assert all(valid("svc.engine_status", s) == [] for s in statuses)
    logs = [e.message for e in store.events(job.job_id) if e.type == "LOG"]
    assert any("bars read" in (m or "") for m in logs)
