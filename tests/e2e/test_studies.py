"""Parameter studies through real processes: a private-operator gateway (its scheduler drives
Optuna with ask and tell) and ``spine worker`` processes running each trial as a backtest job.
The workers run a stand-in runner (tests/unit/jobs/study_fake_runner.py) whose objective is a
known function of the parameters, so every trial's value and the best are known; the real
runner's study is in test_study_stack.py."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "jobs"))

from gateways import template_gateway  # noqa: E402
from nodes import envelope, get, post  # noqa: E402
from study_fake_runner import score  # noqa: E402
from workers import Workers, running_workers, wait_until  # noqa: E402

from reference.wire_validator import validate  # noqa: E402

RUNNER = {"SPINE_WORKER_RUNNER": "study_fake_runner:run"}
#: 2024-01-01 and 2024-02-01 (the fake runner reads no bars: any span does).
TRAINING = {"start": "1704067200000000000", "end": "1706745599999999999"}
HOLDOUT = {"start": "2024-02-01T00:00:00Z", "end": "2024-02-29T23:59:59Z"}


@dataclass
class Stack:
    gateway: str
    workers: Workers
    home: Path


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    home = tmp_path_factory.mktemp("studies")
    with template_gateway(home / "gateway", "study_poll_secs = 0.05\n") as gateway:
        with running_workers(home, f"sqlite:///{home / 'gateway' / 'spine.db'}") as workers:
            steer = {
                "STUDY_FAKE_RUNS": str(home / "runs.txt"),
                "STUDY_FAKE_GATE": str(home / "gate"),
                "STUDY_FAKE_FAIL": str(home / "fail"),
                "STUDY_FAKE_LATER": str(home / "later"),
            }
            for name in ("w1", "w2"):
                workers.start(name, **RUNNER, **steer)
            yield Stack(gateway, workers, home)


def body(**changes: Any) -> dict[str, Any]:
    study = {
        "strategy_id": "ema",
        "search": {"fast": {"low": 2, "high": 12}, "slow": {"low": "10", "high": "30", "step": "2"}},
        "objective": {"metric": "total_pnl", "direction": "MAXIMIZE"},
        "trials": 8,
        "parallel": 2,
        "sampler": {"name": "TPE", "seed": 7},
        "training": TRAINING,
        "holdout": HOLDOUT,
        "label": "e2e",
    }
    return study | changes


def ok(url: str) -> Any:
    status, document = get(url)
    assert status == 200, document
    validate(document)
    return document


def unvalidated(url: str) -> Any:
    status, document = get(url)
    assert status == 200, document
    return document


def create(stack: Stack, **changes: Any) -> dict[str, Any]:
    status, study = post(stack.gateway + "/v2/studies", body(**changes))
    assert status == 201, study
    validate(study)
    return study


def settled(stack: Stack, study_id: str, states: tuple[str, ...] = ("COMPLETED", "FAILED", "CANCELLED")) -> Any:
    """The study once it is in one of ``states`` with no trial running."""
    url = f"{stack.gateway}/v2/studies/{study_id}"
    found: list[Any] = []

    def done() -> bool:
        found[:] = [ok(url)]
        return found[0]["state"] in states and found[0]["progress"]["running"] == 0

    wait_until(done, f"study {study_id} in {states}", stack.workers, seconds=120)
    return found[0]


def trials(stack: Stack, study_id: str) -> list[dict[str, Any]]:
    page = ok(f"{stack.gateway}/v2/studies/{study_id}/trials?limit=1000")
    assert page["study_id"] == study_id and page["next_cursor"] is None
    return page["items"]


def values(trial: dict[str, Any]) -> dict[str, str]:
    return {p["name"]: p["value"] for p in trial["params"]}


def test_a_study_runs_its_trials_and_finds_the_best(stack: Stack) -> None:
    study = create(stack)
    assert study["state"] == "QUEUED" and study["progress"]["target"] == 8
    assert study["definition"]["search"]["slow"] == {"low": "10", "high": "30", "step": "2"}
    done = settled(stack, study["study_id"])
    assert done["state"] == "COMPLETED" and done["trials"] == 8 and done["progress"]["complete"] == 8, done
    items = trials(stack, study["study_id"])
    assert [t["trial"] for t in items] == list(range(8))
    for trial in items:
        got = values(trial)
        assert trial["state"] == "COMPLETE" and int(got["fast"]) in range(2, 13)
        assert int(got["slow"]) in range(10, 31, 2)
        assert Decimal(trial["value"]) == score(got | {"quantity": "0.1"})  # as served, exactly
        assert trial["run_id"] and trial["result_hash"] and trial["job_id"]
        job = ok(f"{stack.gateway}/v2/backtests/{trial['job_id']}")
        assert job["state"] == "COMPLETED" and job["run_id"] == trial["run_id"]
    best = max(items, key=lambda t: Decimal(t["value"]))
    assert done["best_trial"] == best["trial"] and done["best_value"] == best["value"]
    answer = get(f"{stack.gateway}/v2/studies/{study['study_id']}/best")[1]
    assert answer["trial"] == best and Decimal(answer["statistics"]["total_pnl"]) == Decimal(best["value"])
    assert ok(f"{stack.gateway}/v2/studies/{study['study_id']}/trials/{best['trial']}") == best


def test_a_seeded_study_draws_the_same_trials_and_best_twice(stack: Stack) -> None:
    """One trial at a time (ask, run, tell, ask...): the sampler sees the same history."""
    runs = []
    for _ in range(2):
        study = create(stack, trials=6, parallel=1, sampler={"name": "TPE", "seed": 11})
        done = settled(stack, study["study_id"])
        runs.append(([values(t) for t in trials(stack, study["study_id"])], done["best_trial"], done["best_value"]))
    assert runs[0] == runs[1]
    other = create(stack, trials=6, parallel=1, sampler={"name": "RANDOM", "seed": 12})
    settled(stack, other["study_id"])
    assert [values(t) for t in trials(stack, other["study_id"])] != runs[0][0]


@contextmanager
def two_held(stack: Stack) -> Iterator[str]:
    """A 5-trial study with two trials running, held (the runs wait on the gate file) until
    the block ends; its id."""
    gate = stack.home / "gate"
    gate.write_text("")
    try:
        study_id = create(stack, trials=5, parallel=2)["study_id"]
        url = f"{stack.gateway}/v2/studies/{study_id}"
        wait_until(lambda: ok(url)["progress"]["running"] == 2, "2 trials running", stack.workers)
        yield study_id
    finally:
        gate.unlink()


def test_pause_lets_running_trials_finish_and_starts_none(stack: Stack) -> None:
    with two_held(stack) as study_id:
        assert ok(f"{stack.gateway}/v2/studies/{study_id}/pause")["state"] == "PAUSED"
        assert ok(f"{stack.gateway}/v2/studies/{study_id}/pause")["state"] == "PAUSED"  # again: no change
    done = settled(stack, study_id, ("PAUSED",))
    assert done["progress"]["complete"] == 2 and done["trials"] == 2
    assert ok(f"{stack.gateway}/v2/studies/{study_id}/resume")["state"] == "RUNNING"
    assert ok(f"{stack.gateway}/v2/studies/{study_id}/resume")["state"] == "RUNNING"  # again: no change
    done = settled(stack, study_id)
    assert done["state"] == "COMPLETED" and done["progress"]["complete"] == 5
    for action in ("pause", "resume", "cancel"):
        text = envelope(get(f"{stack.gateway}/v2/studies/{study_id}/{action}"), 409, "CONFLICT")
        assert "COMPLETED" in text, text
    assert "/retry" in envelope(get(f"{stack.gateway}/v2/studies/{study_id}/resume"), 409, "CONFLICT")
    assert "no failed trial" in envelope(get(f"{stack.gateway}/v2/studies/{study_id}/retry"), 409, "CONFLICT")


def test_cancel_cancels_the_running_trials(stack: Stack) -> None:
    with two_held(stack) as study_id:
        assert ok(f"{stack.gateway}/v2/studies/{study_id}/cancel")["state"] == "CANCELLED"
        done = settled(stack, study_id, ("CANCELLED",))
    items = trials(stack, study_id)
    assert [t["state"] for t in items] == ["FAIL", "FAIL"] and done["progress"]["failed"] == 2
    for trial in items:
        assert trial["reason"] == "its backtest job was cancelled" and trial["value"] is None
        assert ok(f"{stack.gateway}/v2/backtests/{trial['job_id']}")["state"] == "CANCELLED"
    for action in ("cancel", "resume", "pause", "retry"):
        text = envelope(get(f"{stack.gateway}/v2/studies/{study_id}/{action}"), 409, "CONFLICT")
        assert "CANCELLED" in text, text


def test_retry_runs_the_failed_trials_again_with_the_same_parameters(stack: Stack) -> None:
    fail = stack.home / "fail"
    fail.write_text("4")
    try:
        study = create(stack, search={"fast": {"choices": ["4", 9]}, "slow": {"low": 20, "high": 21}}, trials=4)
        study_id = study["study_id"]
        done = settled(stack, study_id)
    finally:
        fail.unlink()
    first = trials(stack, study_id)
    failed = [t for t in first if t["state"] == "FAIL"]
    assert failed and all(values(t)["fast"] == "4" for t in failed)
    assert all(t["reason"].startswith("its backtest failed") for t in failed)
    assert done["state"] == "COMPLETED" or done["last_error"].startswith("every trial failed")
    again = ok(f"{stack.gateway}/v2/studies/{study_id}/retry")
    assert again["state"] == "RUNNING"
    done = settled(stack, study_id)
    assert done["state"] == "COMPLETED"
    after = trials(stack, study_id)
    retried = after[len(first) :]
    assert [values(t) for t in retried] == [values(t) for t in failed]
    assert all(t["state"] == "COMPLETE" for t in retried)
    assert after[: len(first)] == first  # the failed trials stay as they were
    assert "no failed trial" in envelope(get(f"{stack.gateway}/v2/studies/{study_id}/retry"), 409, "CONFLICT")


def test_an_objective_the_report_leaves_null_fails_every_trial(stack: Stack) -> None:
    study = create(stack, objective={"metric": "sharpe", "direction": "MAXIMIZE"}, trials=2)
    done = settled(stack, study["study_id"])
    assert done["state"] == "FAILED" and done["best_trial"] is None
    assert done["last_error"].startswith("every trial failed; trial 0: sharpe is null"), done
    assert "no complete trial" in envelope(get(f"{stack.gateway}/v2/studies/{study['study_id']}/best"), 409, "CONFLICT")


def test_the_holdout_never_takes_part_in_the_selection(stack: Stack) -> None:
    """Two studies alike but for their holdout "bars" (what a run after the training window
    scores): the same trials and best; only the holdout run differs."""
    later = stack.home / "later"
    answers = []
    try:
        for bonus in ("0", "5000"):
            later.write_text(bonus)
            study = create(stack, trials=5, parallel=1, sampler={"name": "TPE", "seed": 3})
            done = settled(stack, study["study_id"])
            url = f"{stack.gateway}/v2/studies/{study['study_id']}/holdout"
            first = unvalidated(url)  # the stand-in runner's statistics are not the real document
            wait_until(lambda: unvalidated(url)["holdout"]["state"] == "COMPLETED", "the holdout run", stack.workers)
            holdout = unvalidated(url)
            assert holdout["holdout"]["job_id"] == first["holdout"]["job_id"]  # asked again: the same run
            answers.append((done, [values(t) for t in trials(stack, study["study_id"])], holdout))
    finally:
        later.unlink()
    (done_a, trials_a, hold_a), (done_b, trials_b, hold_b) = answers
    assert trials_a == trials_b and done_a["best_trial"] == done_b["best_trial"] == hold_a["trial"]
    assert done_a["trials"] == 5  # the holdout run is no trial
    assert hold_a["training"]["statistics"] == hold_b["training"]["statistics"]
    assert hold_a["params"] == hold_b["params"]
    training, holdout = hold_b["training"], hold_b["holdout"]
    assert training["window"] == {"start": TRAINING["start"], "end": TRAINING["end"]}
    assert holdout["window"] == {"start": "1706745600000000000", "end": "1709251199000000000"}
    gain = Decimal(holdout["statistics"]["total_pnl"]) - Decimal(training["statistics"]["total_pnl"])
    assert gain == 5000 and Decimal(hold_a["holdout"]["statistics"]["total_pnl"]) == Decimal(
        hold_a["training"]["statistics"]["total_pnl"]
    )
    assert holdout["statistics"]["spec"]["start"] == holdout["window"]["start"]


def test_promote_saves_the_best_parameters_as_a_new_revision(stack: Stack) -> None:
    gateway = stack.gateway
    files = ok(gateway + "/v2/strategy-templates/ema_cross")["files"]
    from gateways import save_strategy

    base = save_strategy(gateway, "promoted", files)
    study = create(stack, strategy_id="promoted", trials=4, parameters={"quantity": "0.5"})
    done = settled(stack, study["study_id"])
    best = ok(f"{gateway}/v2/studies/{study['study_id']}/trials/{done['best_trial']}")
    status, revision = get(f"{gateway}/v2/studies/{study['study_id']}/promote")
    assert status == 201, revision
    validate(revision)
    assert revision["parent_revision_id"] == base["revision_id"]
    assert f"trial {best['trial']}" in revision["message"]
    head = ok(gateway + "/v2/strategies/promoted")
    assert head["head_revision_id"] == revision["revision_id"]
    text = ok(f"{gateway}/v2/strategies/promoted/files/strategy.toml")["content"]
    for name, value in values(best).items():
        assert f'[parameters.{name}]\ntype = "integer"\ndefault = {value}\n' in text
    assert 'default = "0.5"' in text  # the study's fixed value too: the trial ran with it
    # The promoted revision's own defaults reproduce the best trial's result on its window.
    status, receipt = post(gateway + "/v2/backtests", {"strategy_id": "promoted", **TRAINING})
    assert status == 202, receipt
    url = f"{gateway}/v2/backtests/{receipt['job_id']}"
    wait_until(lambda: ok(url)["state"] == "COMPLETED", "the promoted revision's run", stack.workers)
    assert unvalidated(url + "/report")["result_hash"] == best["result_hash"]
    # The head moved past the study's revision: a second promote is a conflict, never an overwrite.
    status, conflict = get(f"{gateway}/v2/studies/{study['study_id']}/promote")
    assert status == 409 and conflict["schema_id"] == "svc.strategy_mutation_conflict", conflict
    validate(conflict)
    assert conflict["expected_revision_id"] == base["revision_id"]
    assert conflict["head_revision_id"] == revision["revision_id"] and conflict["paths"] == ["strategy.toml"]
    assert ok(gateway + "/v2/strategies/promoted")["head_revision_id"] == revision["revision_id"]


@pytest.mark.parametrize(
    ("changes", "status", "symbol", "words"),
    [
        ({"extra": 1}, 400, "UNKNOWN_BODY_KEYS", ("POST /v2/studies", "extra", "allowed keys: strategy_id")),
        ({"objective": {"metric": "total_pnl", "goal": "UP"}}, 400, "INVALID_BODY", ("goal", "objective")),
        ({"search": {"nope": {"low": 1, "high": 2}}}, 400, "INVALID_BODY", ("search.nope", "declared: fast")),
        ({"search": {"fast": {"low": 1, "high": 5}}}, 400, "INVALID_BODY", ("search.fast.low", "2..100")),
        ({"search": {"fast": {"from": 2, "to": 5}}}, 400, "INVALID_BODY", ("search.fast", '"low" and "high"')),
        ({"search": {"quantity": {"low": "0.1", "high": "0.5"}}}, 400, "INVALID_BODY", ("step", "required")),
        ({"search": {"slow": {"low": 10, "high": 15, "step": 2}}}, 400, "INVALID_BODY", ("whole number of steps",)),
        ({"search": {"fast": {"choices": ["3", "3"]}}}, 400, "INVALID_BODY", ("repeats",)),
        ({"parameters": {"fast": "3"}}, 400, "INVALID_BODY", ("parameters.fast", "searched too")),
        ({"parameters": {"quantity": "0"}}, 400, "INVALID_BODY", ("quantity",)),
        ({"objective": {"metric": "happiness"}}, 400, "INVALID_BODY", ("happiness", "total_pnl")),
        ({"trials": 0}, 400, "INVALID_BODY", ("trials",)),
        ({"sampler": {"name": "CMA"}}, 400, "INVALID_BODY", ("sampler.name",)),
        ({"training": {"start": "soon", "end": "1"}}, 400, "INVALID_BODY", ("training.start", "soon")),
        ({"training": {"start": "5", "end": "1"}}, 400, "INVALID_BODY", ("training", "after end")),
        ({"holdout": TRAINING}, 400, "INVALID_BODY", ("holdout.start", "follows the training window")),
        ({"strategy_id": "ghost"}, 404, "NOT_FOUND", ("ghost",)),
        ({"revision_id": "ab" * 32}, 404, "NOT_FOUND", ("ab" * 32,)),
        ({"instrument_id": "A/B.SIM"}, 400, "INVALID_INSTRUMENT_ID", ("instrument_id", "/")),
    ],
)
def test_a_body_it_cannot_run_is_refused_naming_what_and_what_is_allowed(
    stack: Stack, changes: dict[str, Any], status: int, symbol: str, words: tuple[str, ...]
) -> None:
    before = ok(stack.gateway + "/v2/studies?limit=1000")["items"]
    text = envelope(post(stack.gateway + "/v2/studies", body(**changes)), status, symbol)
    for word in words:
        assert word in text, text
    assert ok(stack.gateway + "/v2/studies?limit=1000")["items"] == before or len(before) == 1000


def test_a_float_never_crosses(stack: Stack) -> None:
    raw = b'{"strategy_id":"ema","search":{"quantity":{"low":"0.1","high":"0.5","step":0.1}},'
    raw += b'"objective":{"metric":"total_pnl"},"trials":2,"training":{"start":"0","end":"1"}}'
    assert "$.search.quantity.step" in envelope(post(stack.gateway + "/v2/studies", raw), 400, "INVALID_BODY")


def test_lookups_name_what_is_wrong(stack: Stack) -> None:
    gateway = stack.gateway
    assert "64 lowercase hex" in envelope(get(gateway + "/v2/studies/nope"), 400, "INVALID_PARAMETER")
    assert "GET /v2/studies" in envelope(get(gateway + "/v2/studies/" + "0" * 64 + "/trials"), 404, "NOT_FOUND")
    study = create(stack, trials=1, holdout=None)
    study_id = study["study_id"]
    settled(stack, study_id)
    assert "0..0" in envelope(get(f"{gateway}/v2/studies/{study_id}/trials/5"), 404, "NOT_FOUND")
    assert "number" in envelope(get(f"{gateway}/v2/studies/{study_id}/trials/x"), 400, "INVALID_PARAMETER")
    assert "no holdout window" in envelope(get(f"{gateway}/v2/studies/{study_id}/holdout"), 409, "CONFLICT")
    assert "state" in envelope(get(f"{gateway}/v2/studies/{study_id}/trials?state=DONE"), 400, "INVALID_PARAMETER")
    assert "state" in envelope(get(f"{gateway}/v2/studies?state=DONE"), 400, "INVALID_PARAMETER")


def test_the_study_list_pages_newest_first_and_filters(stack: Stack) -> None:
    made = [create(stack, trials=1, label=f"page {k}")["study_id"] for k in range(3)]
    for study_id in made:
        settled(stack, study_id)
    first = ok(stack.gateway + "/v2/studies?limit=2&strategy_id=ema")
    assert [s["study_id"] for s in first["items"]] == made[::-1][:2]
    following = ok(stack.gateway + f"/v2/studies?limit=2&strategy_id=ema&cursor={first['next_cursor']}")
    assert following["items"][0]["study_id"] == made[0]
    completed = ok(stack.gateway + "/v2/studies?state=COMPLETED&limit=1000")["items"]
    assert set(made) <= {s["study_id"] for s in completed} and all(s["state"] == "COMPLETED" for s in completed)
    assert ok(stack.gateway + "/v2/studies?strategy_id=nobody")["items"] == []
    page = ok(f"{stack.gateway}/v2/studies/{made[0]}/trials?state=COMPLETE")
    assert [t["state"] for t in page["items"]] == ["COMPLETE"]


def test_a_public_readonly_gateway_refuses_every_study_command(tmp_path: Path) -> None:
    from gateways import spawn_gateway
    from nodes import free_port, stop, wait_for

    dead = f"http://127.0.0.1:{free_port()}"
    process, gateway = spawn_gateway(tmp_path, [dead], dead, SPINE_DEPLOYMENT_MODE="public-readonly")
    try:
        wait_for(process, lambda: get(gateway + "/v2/health")[0] == 200, "answering")
        registry = {op["id"]: op for op in ok(gateway + "/v2/registry")["operations"]}
        commands = {"create", "pause", "resume", "cancel", "retry", "holdout", "promote"}
        for op_id, op in registry.items():
            if op_id.startswith("spine.studies."):
                assert (op["effect"] == "COMMAND") == (op_id.split(".")[-1] in commands), op
        envelope(post(gateway + "/v2/studies", body()), 403, "MUTATION_REFUSED")
        some = "0" * 64
        for action in sorted(commands - {"create"}):
            envelope(get(f"{gateway}/v2/studies/{some}/{action}"), 403, "MUTATION_REFUSED")
        assert ok(gateway + "/v2/studies")["items"] == []
        envelope(get(f"{gateway}/v2/studies/{some}/best"), 404, "NOT_FOUND")
    finally:
        stop(process)


def test_a_new_gateway_adopts_the_trials_a_killed_one_was_running(tmp_path: Path) -> None:
    """SIGKILL the gateway mid-trial: the next gateway on its data directory takes the study
    up, follows the running trial's job to its end and asks for the rest (nothing runs twice)."""
    import signal

    from gateways import save_strategy, spawn_gateway
    from nodes import free_port, stop, wait_for

    dead = f"http://127.0.0.1:{free_port()}"
    home, gate, runs = tmp_path / "gateway", tmp_path / "gate", tmp_path / "runs.txt"
    config = "study_poll_secs = 0.05\n"
    first, gateway = spawn_gateway(home, [dead], dead, config, SPINE_DEPLOYMENT_MODE="private-operator")
    with running_workers(tmp_path, f"sqlite:///{home / 'spine.db'}") as workers:
        try:
            wait_for(first, lambda: get(gateway + "/v2/health")[0] == 200, "answering")
            save_strategy(gateway, "ema", ok(gateway + "/v2/strategy-templates/ema_cross")["files"])
            workers.start("w1", **RUNNER, STUDY_FAKE_GATE=str(gate), STUDY_FAKE_RUNS=str(runs))
            gate.write_text("")
            status, study = post(gateway + "/v2/studies", body(trials=3, parallel=1, holdout=None))
            assert status == 201, study
            wait_until(lambda: runs.exists() and runs.read_text() != "", "a trial running", workers)
        finally:
            first.send_signal(signal.SIGKILL)
            first.communicate(timeout=30)  # and its pipes closed
        second, gateway = spawn_gateway(home, [dead], dead, config, SPINE_DEPLOYMENT_MODE="private-operator")
        try:
            wait_for(second, lambda: get(gateway + "/v2/health")[0] == 200, "answering")
            gate.unlink()
            url = f"{gateway}/v2/studies/{study['study_id']}"
            wait_until(lambda: ok(url)["state"] == "COMPLETED", "the study completed", workers)
            items = ok(url + "/trials")["items"]
        finally:
            stop(second)
    assert [t["state"] for t in items] == ["COMPLETE"] * 3
    ran = [line.split()[0] for line in runs.read_text().splitlines()]
    assert sorted(ran) == sorted(t["job_id"] for t in items)  # each once, the first adopted
