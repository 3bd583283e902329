"""A study with the real runner, all real processes on loopback: a venue node writing its
catalog, the gateway (private-operator) and a ``spine worker``. An EMA-cross study over the
node's flushed bars runs its trials as real backtests; every document is schema-valid; the
best trial's parameters promoted to a revision reproduce its result_hash on the training
window; the holdout runs them on the window after it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from gateways import save_strategy, spawn_gateway
from nodes import free_port, get, post, running_node, stop, wait_for
from workers import real_worker, wait_until

from reference.wire_validator import validate


def ok(url: str) -> Any:
    status, document = get(url)
    assert status == 200, document
    validate(document)
    return document


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    home = tmp_path_factory.mktemp("study-stack")
    dead = f"http://127.0.0.1:{free_port()}"
    (home / "node").mkdir()
    with running_node(home / "node", warm_bars=2_000) as node:
        process, url = spawn_gateway(
            home / "gateway", [node], dead, "study_poll_secs = 0.05\n", SPINE_DEPLOYMENT_MODE="private-operator"
        )
        try:
            with real_worker(home, f"sqlite:///{home / 'gateway' / 'spine.db'}", [home / "node" / "data" / "catalog"]):
                wait_for(process, lambda: get(url + "/v2/health")[1]["ready"] is True, "ready")
                wait_for(
                    process,
                    lambda: any((home / "node" / "data" / "catalog" / "external").rglob("*.parquet")),
                    "a flushed catalog",
                )
                save_strategy(url, "ema_study", ok(url + "/v2/strategy-templates/ema_cross")["files"])
                yield url
        finally:
            stop(process)


def test_a_real_study_promotes_a_revision_that_reproduces_its_best_trial(gateway: str) -> None:
    page = gateway + "/v2/bars?instrument_id=BTCUSDT.SIM&limit=5000"
    wait_until(lambda: len(ok(page)["bars"]) >= 400, "the node's warm bars", seconds=120)
    bars = ok(page)["bars"]
    # Both windows inside what the node has flushed (its newest bars may not be in the catalog yet).
    training = {"start": bars[0]["ts_event"], "end": bars[-160]["ts_event"]}
    holdout = {"start": bars[-159]["ts_event"], "end": bars[-60]["ts_event"]}
    status, study = post(
        gateway + "/v2/studies",
        {
            "strategy_id": "ema_study",
            "search": {"fast": {"low": 2, "high": 6}, "slow": {"low": 8, "high": 20, "step": 4}},
            "objective": {"metric": "ending_equity", "direction": "MAXIMIZE"},
            "trials": 4,
            "parallel": 2,
            "sampler": {"name": "RANDOM", "seed": 5},
            "training": training,
            "holdout": holdout,
        },
    )
    assert status == 201, study
    url = f"{gateway}/v2/studies/{study['study_id']}"
    wait_until(lambda: ok(url)["state"] in ("COMPLETED", "FAILED"), "the study ended", seconds=240)
    done = ok(url)
    assert done["state"] == "COMPLETED" and done["progress"]["complete"] == 4, done
    trials = ok(url + "/trials")["items"]
    for trial in trials:
        statistics = ok(f"{gateway}/v2/backtests/{trial['job_id']}/outputs/statistics")["items"][0]
        assert trial["value"] == statistics["ending_equity"]  # as the report served it
        report = ok(f"{gateway}/v2/backtests/{trial['job_id']}/report")
        assert (trial["run_id"], trial["result_hash"]) == (report["run_id"], report["result_hash"])
        spec = ok(f"{gateway}/v2/backtests/{trial['job_id']}/request")
        assert (spec["body"]["start"], spec["body"]["end"]) == (training["start"], training["end"])
    best = ok(url + "/best")
    assert best["trial"]["trial"] == done["best_trial"] and best["trial"]["value"] == done["best_value"]

    check = ok(url + "/holdout")
    wait_until(lambda: ok(url + "/holdout")["holdout"]["state"] == "COMPLETED", "the holdout run", seconds=240)
    check = ok(url + "/holdout")
    assert check["trial"] == done["best_trial"] and check["training"]["result_hash"] == best["trial"]["result_hash"]
    assert check["holdout"]["statistics"]["job_id"] == check["holdout"]["job_id"]
    assert ok(url)["trials"] == 4  # the holdout run is no trial

    status, revision = get(url + "/promote")
    assert status == 201, revision
    status, receipt = post(gateway + "/v2/backtests", {"strategy_id": "ema_study", **training})
    assert status == 202, receipt
    job = f"{gateway}/v2/backtests/{receipt['job_id']}"
    wait_until(lambda: ok(job)["state"] in ("COMPLETED", "FAILED"), "the promoted revision's run", seconds=240)
    report = ok(job + "/report")
    assert report["revision_id"] == revision["revision_id"]
    assert report["result_hash"] == best["trial"]["result_hash"]
