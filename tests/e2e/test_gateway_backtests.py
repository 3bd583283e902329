"""Backtest jobs through a real ``spine gateway`` with no worker: the sealed submit body and
its refusals, the receipt, the queued job's detail, list and events, cancel of a queued job
and of a finished one, and the report and outputs refused until a run completes. Documents
are checked by the independent validator."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from gateways import spawn_gateway
from nodes import envelope, free_port, get, post, stop, wait_for
from reference.wire_validator import validate
from screeners import ok

ALLOWED = "strategy_id, revision_id, instrument_id, start, end, resolution, channel, parameters, label"


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    dead = f"http://127.0.0.1:{free_port()}"
    process, url = spawn_gateway(tmp_path_factory.mktemp("gateway"), [dead], dead, "job_stream_subscribers = 2\n",
                                 SPINE_DEPLOYMENT_MODE="private-operator")
    try:
        wait_for(process, lambda: get(url + "/v2/health")[0] == 200, "answering")
        files = ok(url + "/v2/strategy-templates/ema_cross")["files"]
        status, _ = post(url + "/v2/strategies", {
            "version": "spine.v2", "schema_id": "svc.strategy_revision_save_request", "schema_version": 2,
            "strategy_id": "ema", "parent_revision_id": None, "message": "", "files": files})
        assert status == 201
        yield url
    finally:
        _, err = stop(process)
        assert process.returncode == 0, err


def submit(gateway: str, **body: Any) -> tuple[int, Any]:
    return post(gateway + "/v2/backtests", {"strategy_id": "ema", **body})


def test_the_body_is_sealed_at_nine_keys(gateway: str) -> None:
    detail = envelope(submit(gateway, capital="1", seed=7), 400, "UNKNOWN_BODY_KEYS")
    assert detail == f"POST /v2/backtests: unknown keys capital, seed; allowed keys: {ALLOWED}"
    envelope(submit(gateway, instrument_id=["BTCUSDT.SIM"]), 400, "INVALID_BODY")  # one id, not a list
    envelope(submit(gateway, parameters={"fast": 12.5}), 400, "INVALID_BODY")  # floats never cross
    envelope(submit(gateway, start="10", end="5"), 400, "INVALID_BODY")
    envelope(submit(gateway, resolution="2m"), 400, "INVALID_BODY")
    assert "fast" in envelope(submit(gateway, parameters={"fast": "1000"}), 400, "INVALID_BODY")
    assert "nope" in envelope(submit(gateway, parameters={"nope": "1"}), 400, "INVALID_BODY")
    envelope(post(gateway + "/v2/backtests", {"strategy_id": "missing"}), 404, "NOT_FOUND")
    envelope(submit(gateway, revision_id="0" * 64), 404, "NOT_FOUND")


def test_a_queued_job_its_events_and_cancel(gateway: str) -> None:
    status, receipt = submit(gateway, parameters={"fast": "12"}, start="0", end="1000", label="queued")
    assert status == 202, receipt
    validate(receipt)
    assert receipt["state"] == "QUEUED"
    job_id = receipt["job_id"]
    detail = ok(gateway + f"/v2/backtests/{job_id}")
    assert (detail["state"], detail["start"], detail["end"], detail["execution"], detail["run_id"]) == (
        "QUEUED", "0", "1000", None, None)
    assert job_id in {j["job_id"] for j in ok(gateway + "/v2/backtests")["items"]}
    assert job_id in {j["job_id"] for j in ok(gateway + "/v2/backtests?state=QUEUED&strategy_id=ema")["items"]}
    assert job_id not in {j["job_id"] for j in ok(gateway + "/v2/backtests?state=RUNNING")["items"]}
    events = ok(gateway + f"/v2/backtests/{job_id}/events")["items"]
    assert [(e["sequence"], e["type"], e["state"]) for e in events] == [(1, "STATE", "QUEUED")]
    envelope(get(gateway + f"/v2/backtests/{job_id}/report"), 409, "CONFLICT")
    envelope(get(gateway + f"/v2/backtests/{job_id}/outputs/orders"), 409, "CONFLICT")
    cancelled = ok(gateway + f"/v2/backtests/{job_id}/cancel")
    assert cancelled["state"] == "CANCELLED" and cancelled["finished_ts"] is not None
    assert "CANCELLED" in envelope(get(gateway + f"/v2/backtests/{job_id}/cancel"), 409, "CONFLICT")
    events = ok(gateway + f"/v2/backtests/{job_id}/events?after_sequence=1")["items"]
    assert [(e["type"], e["state"]) for e in events] == [("STATE", "CANCELLED")]
    # The live stream replays the job's events and ends after its final state.
    with urllib.request.urlopen(gateway + f"/v2/stream/backtests?job_id={job_id}", timeout=10) as response:
        text = response.read().decode()
    frames = [f for f in text.split("\n\n") if f.startswith("event: ")]
    assert [f.split("\n")[0] for f in frames] == ["event: state", "event: state"]
    for frame in frames:
        validate(json.loads(frame.split("data: ", 1)[1]))


def test_unknown_jobs_and_parts(gateway: str) -> None:
    envelope(get(gateway + "/v2/backtests/" + "0" * 64), 404, "NOT_FOUND")
    envelope(get(gateway + "/v2/backtests/xyz"), 400, "INVALID_PARAMETER")
    envelope(get(gateway + "/v2/backtests/" + "0" * 64 + "/cancel"), 404, "NOT_FOUND")
    envelope(get(gateway + "/v2/stream/backtests"), 400, "INVALID_PARAMETER")
    _, receipt = submit(gateway)
    envelope(get(gateway + f"/v2/backtests/{receipt['job_id']}/outputs/nonsense"), 404, "NOT_FOUND")
    envelope(get(gateway + "/v2/backtests?state=DONE"), 400, "INVALID_PARAMETER")


def test_v1_records_are_empty_before_any_run(gateway: str) -> None:
    for path in ("/signals", "/chart-markers", "/retirements"):
        page = ok(gateway + path)
        assert page["items"] == [] and page["next_cursor"] is None
    _, receipt = submit(gateway)
    assert ok(gateway + f"/engine-status?job_id={receipt['job_id']}")["engine_status"] is None


def test_a_sequence_past_the_store_range_is_refused(gateway: str) -> None:
    """A job's sequences are signed 64-bit in the store: 2^63 .. 2^64-1 is a 400 naming the
    range (never a 500), on the page and on the stream alike."""
    _, receipt = submit(gateway)
    job_id = receipt["job_id"]
    for value in (2**63, 2**64 - 1):
        for path in (f"/v2/backtests/{job_id}/events", f"/v2/stream/backtests?job_id={job_id}&"):
            joiner = "?" if "?" not in path else ""
            detail = envelope(get(gateway + path + f"{joiner}after_sequence={value}"), 400, "INVALID_PARAMETER")
            assert "2^63-1" in detail, detail
    top = ok(gateway + f"/v2/backtests/{job_id}/events?after_sequence={2**63 - 1}")
    assert top["items"] == [] and top["next_cursor"] is None


def test_an_operator_sees_upstream_addresses_and_the_public_never_does(gateway: str) -> None:
    """This gateway is private-operator: its status names each upstream and gives its address;
    failures are said plainly (a public-readonly gateway's status is in test_gateway.py)."""
    upstreams = ok(gateway + "/v2/status")["upstreams"]
    assert [(u["kind"], u["name"]) for u in upstreams] == [("node", "node-1"), ("screener", "screener")]
    assert all(u["base_url"].startswith("http://127.0.0.1:") for u in upstreams)
    for upstream in upstreams:
        assert upstream["last_error"] in (None, f"UPSTREAM_UNAVAILABLE: {upstream['name']}: GET /v2/registry: "
                                                "connection refused or unreachable"), upstream
    detail = envelope(get(gateway + "/v2/screener/rows"), 502, "UPSTREAM_UNAVAILABLE")
    assert detail == "screener: GET /v2/screener/rows: connection refused or unreachable"


def frames(response: Any) -> list[str]:
    """The event names of an SSE body read to its end."""
    return [f.split("\n")[0] for f in response.read().decode().split("\n\n") if f.startswith("event: ")]


def test_the_stream_of_an_ended_job_ends_after_what_is_above_its_point(gateway: str) -> None:
    _, receipt = submit(gateway)
    job_id = receipt["job_id"]
    ok(gateway + f"/v2/backtests/{job_id}/cancel")  # events 1 QUEUED, 2 CANCELLED
    for after, names in ((0, ["event: state"] * 2), (1, ["event: state"]), (2, []), (99, [])):
        with urllib.request.urlopen(gateway + f"/v2/stream/backtests?job_id={job_id}&after_sequence={after}",
                                    timeout=30) as response:
            assert frames(response) == names, after


def test_job_streams_are_capped_and_a_cancel_ends_the_open_ones(gateway: str) -> None:
    """The cap is 2 here: a third live stream is 503 SUBSCRIBERS_FULL. The gateway's own
    write (the cancel) wakes both streams, which end after the final state."""
    _, receipt = submit(gateway)
    job_id = receipt["job_id"]
    url = gateway + f"/v2/stream/backtests?job_id={job_id}"
    streams = [urllib.request.urlopen(url, timeout=30) for _ in range(2)]
    try:
        assert all(stream.status == 200 for stream in streams)
        assert "retry later" in envelope(get(url), 503, "SUBSCRIBERS_FULL")
        ok(gateway + f"/v2/backtests/{job_id}/cancel")
        for stream in streams:
            assert frames(stream) == ["event: state", "event: state"]  # QUEUED, then CANCELLED; the end
    finally:
        for stream in streams:
            stream.close()
    for _ in range(3):  # the ended streams left the cap
        with urllib.request.urlopen(url, timeout=30) as response:
            assert frames(response) == ["event: state", "event: state"]


def test_a_failed_jobs_routes_serve_no_internals(tmp_path: Any) -> None:
    """A job a worker failed before public reasons (its traceback, paths and class name stored
    as they were) is served with none of them: detail, events, report, engine status, stream."""
    import hashlib

    from spine.jobs import Store

    dead = f"http://127.0.0.1:{free_port()}"
    process, url = spawn_gateway(tmp_path / "gateway", [dead], dead)
    try:
        wait_for(process, lambda: get(url + "/v2/health")[0] == 200, "answering")
        trace = ('Traceback (most recent call last):\n  File "/srv/spine/python/spine/backtest/bars.py", line 9\n'
                 "KeyError: '/srv/spine/catalog/external'")
        status = ('{"version":"spine.v2","schema_id":"svc.engine_status","schema_version":1,"run_id":null,'
                  '"lifecycle":"FAILED","ts_event":"5","counters":{"bars_accepted":0,"bars_rejected":0,'
                  '"signals_emitted":0,"orders_submitted":0,"fills":0,"errors":1},"authorities":[],'
                  '"last_error":"NO_BARS: looked under /srv/spine/catalog/external"}')
        with Store(f"sqlite:///{tmp_path / 'gateway' / 'spine.db'}") as store:
            text = '[strategy]\nname = "x"\n'
            store.save_revision("x", None, "", [("strategy.toml", text, hashlib.sha256(text.encode()).hexdigest())],
                                "1" * 64, [], "x", None, 1)
            job = store.submit("2" * 64, "x", "1" * 64, "{}", None, 0, 1, 2)
            store.claim("w1", 3)
            store.append_event(job.job_id, "LOG", None, "ERROR", trace, 4)
            store.put_outputs(job.job_id, {"engine_status": [status.encode()]})
            store.finish(job.job_id, "w1", "FAILED", None, "KeyError: '/srv/spine/catalog/external'", 5)
        served = [ok(url + f"/v2/backtests/{job.job_id}"), ok(url + f"/v2/backtests/{job.job_id}/events"),
                  envelope(get(url + f"/v2/backtests/{job.job_id}/report"), 409, "CONFLICT"),
                  ok(url + f"/engine-status?job_id={job.job_id}")]
        with urllib.request.urlopen(url + f"/v2/stream/backtests?job_id={job.job_id}", timeout=30) as response:
            served.append(response.read().decode())
        for document in served:
            for secret in ("Traceback", "/srv/", "KeyError", "bars.py"):
                assert secret not in str(document), (secret, document)
        assert served[0]["last_error"] == "INTERNAL: the run failed; the worker's log has its error"
        assert served[3]["engine_status"]["last_error"] == "NO_BARS: looked under <path>"
    finally:
        stop(process)
