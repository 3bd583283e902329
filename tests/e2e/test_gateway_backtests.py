"""Backtest jobs through a real ``spine gateway`` with no worker: the sealed submit body and
its refusals, the receipt, the queued job's detail, list and events, cancel of a queued job
and of a finished one, and the report and outputs refused until a run completes. Documents
are checked by the independent validator. The gateway knows one import catalog (two daily
bars of an equity, written by ``spine import``): what a run of it would lack is refused at
submit; its node is dead, so nothing the node would know is refused."""

from __future__ import annotations

import json
import os
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gateways import save_strategy, spawn_gateway, template_gateway
from nodes import envelope, free_port, get, post, spine_import, stop, wait_for
from screeners import ok

from reference.wire_validator import validate

ALLOWED = "strategy_id, revision_id, instrument_id, start, end, resolution, channel, parameters, label"
#: The imported equity: daily bars closing 2024-01-03 and 2024-01-04 (00:00 UTC), size step 1.
SPY = "SPY.XNYS"
DAY_3, DAY_4 = "1704240000000000000", "1704326400000000000"


def import_daily(directory: Path) -> Path:
    """A catalog dir holding :data:`SPY`'s two daily bars, written by ``spine import``."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "spy.csv").write_text(
        "date,open,high,low,close,volume\n2024-01-02,470.5,472,469.25,471,100\n2024-01-03,471,473,470,472.5,90\n"
    )
    daily = ("--venue", "XNYS", "--step", "1d", "--catalog", str(directory / "imports"))  # a date is its day's bar
    spine_import(*daily, str(directory / "spy.csv"), env=dict(os.environ))
    return directory / "imports"


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    imports = import_daily(tmp_path_factory.mktemp("imports"))
    config = f"catalogs = [{str(imports)!r}]\njob_stream_subscribers = 2\n"
    with template_gateway(tmp_path_factory.mktemp("gateway"), config) as url:
        files = ok(url + "/v2/strategy-templates/ema_cross")["files"]
        # The template at a fixed quantity 1: whole units, as the equity trades.
        save_strategy(
            url,
            "whole",
            [
                {**f, "content": f["content"].replace('quantity = "{quantity}"', 'quantity = "1"')}
                if f["path"] == "strategy.toml"
                else f
                for f in files
            ],
        )
        yield url


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
        "QUEUED",
        "0",
        "1000",
        None,
        None,
    )
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


def test_times_may_be_iso_8601_utc_and_are_refused_in_words(gateway: str) -> None:
    status, receipt = submit(gateway, start="2024-01-01", end="2024-01-02T00:00:00Z")
    assert status == 202, receipt
    detail = ok(gateway + f"/v2/backtests/{receipt['job_id']}")
    assert (detail["start"], detail["end"]) == ("1704067200000000000", "1704153600000000000")
    for bad in ("2024-01-01T00:00:00", "2024-13-01", "yesterday", "-1"):
        text = envelope(submit(gateway, start=bad), 400, "INVALID_BODY")
        assert "ISO-8601 UTC time" in text and "^(" not in text, text


def test_json_integers_are_taken_for_parameters_and_floats_are_not(gateway: str) -> None:
    status, receipt = submit(gateway, parameters={"fast": 12}, start="0", end="1000")
    assert status == 202, receipt
    same, again = submit(gateway, parameters={"fast": "12"}, start="0", end="1000")
    assert same == 202 and again["config_hash"] == receipt["config_hash"]
    assert "fast" in envelope(submit(gateway, parameters={"fast": 1000}), 400, "INVALID_BODY")
    envelope(submit(gateway, parameters={"fast": 12.0}), 400, "INVALID_BODY")


@pytest.mark.parametrize("iid", ["../../x.SIM", "a/b.SIM", "x..y.SIM"])
def test_an_instrument_id_that_is_a_path_is_refused(gateway: str, iid: str) -> None:
    assert "names no catalog path" in envelope(submit(gateway, instrument_id=iid), 400, "INVALID_INSTRUMENT_ID")


def test_a_revision_whose_validation_has_errors_is_refused(gateway: str) -> None:
    files = ok(gateway + "/v2/strategy-templates/ema_cross")["files"]
    broken = [{**f, "content": f["content"] + "\n[extra\n"} if f["path"] == "strategy.toml" else f for f in files]
    save_strategy(gateway, "broken", broken)
    text = envelope(post(gateway + "/v2/backtests", {"strategy_id": "broken"}), 400, "INVALID_BODY")
    assert "strategy.toml:" in text and "/v2/strategies/broken/validate" in text, text


def test_a_huge_quantity_is_refused_with_its_bound(gateway: str) -> None:
    files = ok(gateway + "/v2/strategy-templates/ema_cross")["files"]
    huge = [
        {**f, "content": f["content"].replace('quantity = "{quantity}"', 'quantity = "' + "9" * 40 + '"')}
        if f["path"] == "strategy.toml"
        else f
        for f in files
    ]
    assert huge != files
    save_strategy(gateway, "huge", huge)
    text = envelope(post(gateway + "/v2/backtests", {"strategy_id": "huge"}), 400, "INVALID_BODY")
    assert "at most 34028236692093" in text, text


def test_the_list_and_the_request_route_show_the_run_each_job_asked_for(gateway: str) -> None:
    status, receipt = submit(
        gateway, parameters={"fast": "7"}, start="2024-01-01", end="1800000000000000000", label="shown"
    )
    assert status == 202, receipt
    job_id = receipt["job_id"]
    page = ok(gateway + "/v2/backtests?limit=5")
    validate(page)
    run = page["runs"][job_id]
    assert run["parameters"]["fast"] == "7" and set(run["parameters"]) > {"fast"} and run["label"] == "shown"
    assert set(page["runs"]) == {item["job_id"] for item in page["items"]}
    request = ok(f"{gateway}/v2/backtests/{job_id}/request")
    validate(request)
    assert request["run"] == run and request["config_hash"] == receipt["config_hash"]
    assert request["body"] == {
        "strategy_id": "ema",
        "parameters": {"fast": "7"},
        "start": "1704067200000000000",
        "end": "1800000000000000000",
        "label": "shown",
    }
    envelope(get(f"{gateway}/v2/backtests/{'0' * 64}/request"), 404, "NOT_FOUND")


def test_an_imported_daily_series_runs_at_1d_within_its_span(gateway: str) -> None:
    for span in ({}, {"start": DAY_3, "end": DAY_3}, {"start": "2024-01-04", "end": "2024-01-04"}):
        status, receipt = post(
            gateway + "/v2/backtests", {"strategy_id": "whole", "instrument_id": SPY, "resolution": "1d", **span}
        )
        assert status == 202, (span, receipt)


def test_a_resolution_with_no_bars_is_refused(gateway: str) -> None:
    whole = {"strategy_id": "whole", "instrument_id": SPY}
    text = envelope(post(gateway + "/v2/backtests", whole), 400, "NO_BARS")  # the template's 1m
    assert SPY in text and "daily bars only" in text and "1d" in text, text
    text = envelope(post(gateway + "/v2/backtests", {**whole, "resolution": "1h"}), 400, "NO_BARS")
    assert "1h" in text, text
    for span in ({"start": "2025-01-01"}, {"end": "2024-01-02T00:00:00Z"}, {"start": "1", "end": "2"}):
        text = envelope(post(gateway + "/v2/backtests", {**whole, "resolution": "1d", **span}), 400, "NO_BARS")
        assert SPY in text and "2024-01-03T00:00:00Z" in text and "2024-01-04T00:00:00Z" in text, text
    text = envelope(
        post(gateway + "/v2/backtests", {**whole, "resolution": "1d", "channel": "INTERNAL"}), 400, "NO_BARS"
    )
    assert "INTERNAL" in text, text


def test_a_quantity_finer_than_the_size_step_is_refused(gateway: str) -> None:
    text = envelope(submit(gateway, instrument_id=SPY, resolution="1d"), 400, "INVALID_QUANTITY")
    assert "quantity 0.1" in text and SPY in text and "size step 1 " in text, text


def test_the_template_runs_on_an_equity_with_its_quantity_set(gateway: str) -> None:
    """The template sizes by a parameter: ten shares need no new revision."""
    status, receipt = submit(gateway, instrument_id=SPY, resolution="1d", parameters={"quantity": "10"})
    assert status == 202, receipt
    text = envelope(
        submit(gateway, instrument_id=SPY, resolution="1d", parameters={"quantity": "10.5"}), 400, "INVALID_QUANTITY"
    )
    assert "quantity 10.5" in text and "size step 1 " in text, text


def test_an_instrument_the_dead_node_may_list_is_not_refused_on_a_guess(gateway: str) -> None:
    status, receipt = submit(gateway, instrument_id="ETHUSDT.SIM")
    assert status == 202, receipt


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
        assert upstream["last_error"] in (
            None,
            f"UPSTREAM_UNAVAILABLE: {upstream['name']}: GET /v2/registry: connection refused or unreachable",
        ), upstream
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
        with urllib.request.urlopen(
            gateway + f"/v2/stream/backtests?job_id={job_id}&after_sequence={after}", timeout=30
        ) as response:
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
        trace = (
            'Traceback (most recent call last):\n  File "/srv/spine/python/spine/backtest/bars.py", line 9\n'
            "KeyError: '/srv/spine/catalog/external'"
        )
        status = (
            '{"version":"spine.v2","schema_id":"svc.engine_status","schema_version":1,"run_id":null,'
            '"lifecycle":"FAILED","ts_event":"5","counters":{"bars_accepted":0,"bars_rejected":0,'
            '"signals_emitted":0,"orders_submitted":0,"fills":0,"errors":1},"authorities":[],'
            '"last_error":"NO_BARS: looked under /srv/spine/catalog/external"}'
        )
        with Store(f"sqlite:///{tmp_path / 'gateway' / 'spine.db'}") as store:
            text = '[strategy]\nname = "x"\n'
            store.save_revision(
                "x",
                None,
                "",
                [("strategy.toml", text, hashlib.sha256(text.encode()).hexdigest())],
                "1" * 64,
                [],
                "x",
                None,
                1,
            )
            job = store.submit("2" * 64, "x", "1" * 64, "{}", None, 0, 1, 2)
            store.claim("w1", 3)
            store.append_event(job.job_id, "LOG", None, "ERROR", trace, 4)
            store.put_outputs(job.job_id, {"engine_status": [status.encode()]})
            store.finish(job.job_id, "w1", "FAILED", None, "KeyError: '/srv/spine/catalog/external'", 5)
        served = [
            ok(url + f"/v2/backtests/{job.job_id}"),
            ok(url + f"/v2/backtests/{job.job_id}/events"),
            envelope(get(url + f"/v2/backtests/{job.job_id}/report"), 409, "CONFLICT"),
            ok(url + f"/engine-status?job_id={job.job_id}"),
        ]
        with urllib.request.urlopen(url + f"/v2/stream/backtests?job_id={job.job_id}", timeout=30) as response:
            served.append(response.read().decode())
        for document in served:
            for secret in ("Traceback", "/srv/", "KeyError", "bars.py"):
                assert secret not in str(document), (secret, document)
        assert served[0]["last_error"] == "INTERNAL: the run failed; the worker's log has its error"
        assert served[3]["engine_status"]["last_error"] == "NO_BARS: looked under <path>"
    finally:
        stop(process)
