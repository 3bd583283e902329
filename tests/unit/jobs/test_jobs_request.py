"""The typed backtest request (``spine.jobs.request``) and how it is built and queued
(``spine.jobs.submission``): the codec round-trips and refuses what it does not know, one
request however it was spelt, rows stored before requests carried their plan read as they were
(the same documents, config_hash and sealed body, so the same run_id), the refusals, and the
output parts as the routes list them."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import msgspec
import pytest

from jobs_helpers import rid, save
from spine._core import canonicalize
from spine.http.bodies import BacktestBody
from spine.http.routes import OUTPUT_DOCUMENTS
from spine.jobs import Store, documents
from spine.jobs.request import (
    BacktestRequest,
    ExecutionConfig,
    SealedRequest,
    body_document,
    decode,
    decode_stored,
    encode,
    with_plan,
)
from spine.jobs.submission import RequestRefused, build_request, check_body, submit_request
from spine.wire.outputs import SERVED_PARTS, OutputPart, output_part, served_part

TOML = """[strategy]
name = "EMA cross"
template = "ema_cross"
instruments = ["BTCUSDT.SIM"]
resolution = "1m"
channel = "EXTERNAL"
direction = "LONG_ONLY"

[parameters.fast]
type = "integer"
default = 10
min = 2
max = 100

[parameters.slow]
type = "integer"
default = 30
min = 5
max = 400

[features.ema_fast]
kind = "ema"
period = "{fast}"

[features.ema_slow]
kind = "ema"
period = "{slow}"

[rules]
entry_long = { key = "ema_fast.value", op = "CROSSES_ABOVE", ref = "ema_slow.value" }
exit_long = { key = "ema_fast.value", op = "CROSSES_BELOW", ref = "ema_slow.value" }

[sizing]
quantity = "0.1"
"""
FILES = {"strategy.toml": TOML}
REVISION = "b" * 64
EXECUTION = ExecutionConfig(capital="100000", seed=42)
NOW = 1_750_000_000_000_000_000
#: What the gateway stored for ``{"strategy_id": "ema", "parameters": {"fast": 12}, "start":
#: "2024-01-01", "label": "x"}`` at NOW before requests carried their plan (written by that code).
OLD_ROW = (
    '{"body":{"label":"x","parameters":{"fast":"12"},"start":"1704067200000000000",'
    '"strategy_id":"ema"},'
    '"config_hash":"89838da3e4b8e85ccc1bbfd59eea5a8811fcb6464b7164c7a73cfa449ae51104",'
    '"execution":{"capital":"100000","fee_model":"MAKER_TAKER","fill_model":"FILL_MODEL","seed":42},'
    '"spec":{"channel":"EXTERNAL","end":"1750000000000000000","instrument_id":null,"resolution":"1m",'
    '"revision_id":"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",'
    '"start":"1704067200000000000","strategy_id":"ema","values":{"fast":"12","slow":"30"}}}'
)
#: ``svc.backtest_request`` of that row, as that code served it.
OLD_DOCUMENT = (
    b'{"version":"spine.v2","schema_id":"svc.backtest_request","schema_version":1,'
    b'"job_id":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",'
    b'"config_hash":"89838da3e4b8e85ccc1bbfd59eea5a8811fcb6464b7164c7a73cfa449ae51104",'
    b'"body":{"label":"x","parameters":{"fast":"12"},"start":"1704067200000000000",'
    b'"strategy_id":"ema"},"run":{"resolution":"1m","channel":"EXTERNAL","parameters":{"fast":"12",'
    b'"slow":"30"},"label":"x"}}'
)


def built(now: int = NOW, **body: Any) -> BacktestRequest:
    return build_request(BacktestBody(strategy_id="ema", **body), REVISION, FILES, EXECUTION, now)


def job(request: str) -> SimpleNamespace:
    return SimpleNamespace(job_id="a" * 64, request=request)


def test_a_request_round_trips_as_canonical_text() -> None:
    request = built(parameters={"fast": 12}, start="2024-01-01", label="x", instrument_id="ETHUSDT.SIM")
    text = encode(request)
    assert canonicalize(text) == text.encode()
    assert decode(text) == request and decode_stored(text) == request
    assert request.instruments == ["ETHUSDT.SIM"] and built().instruments == ["BTCUSDT.SIM"]
    assert (request.spec.start, request.spec.end) == ("1704067200000000000", str(NOW))
    assert request.plan.values == request.spec.values == {"fast": "12", "slow": "30"}


@pytest.mark.parametrize("where", [(), ("body",), ("spec",), ("execution",), ("plan",)])
def test_a_key_it_does_not_know_is_refused(where: tuple[str, ...]) -> None:
    document = json.loads(encode(built()))
    target = document
    for key in where:
        target = target[key]
    target["extra"] = 1
    with pytest.raises(msgspec.ValidationError, match="extra"):
        decode(json.dumps(document))
    with pytest.raises(msgspec.ValidationError, match="extra"):
        decode_stored(json.dumps(document))


def test_a_missing_key_or_a_wrong_type_is_refused() -> None:
    document = json.loads(encode(built()))
    with pytest.raises(msgspec.ValidationError, match="config_hash"):
        decode(json.dumps({key: value for key, value in document.items() if key != "config_hash"}))
    with pytest.raises(msgspec.ValidationError, match="seed"):
        decode(json.dumps(document | {"execution": document["execution"] | {"seed": "42"}}))
    with pytest.raises(msgspec.ValidationError):
        decode_stored("{}")


def test_spellings_of_one_request_seal_alike() -> None:
    one = built(parameters={"fast": 12}, start="2024-01-01", end="2024-01-02T00:00:00Z")
    other = built(parameters={"fast": "12"}, start="1704067200000000000", end="1704153600000000000")
    assert encode(one) == encode(other)
    assert one.job_id(NOW, "g") == other.job_id(NOW, "g") != one.job_id(NOW + 1, "g") != one.job_id(NOW, "h")
    assert body_document(one) == {
        "end": "1704153600000000000",
        "parameters": {"fast": "12"},
        "start": "1704067200000000000",
        "strategy_id": "ema",
    }


def test_an_old_row_reads_as_it_was_served() -> None:
    old = decode_stored(OLD_ROW)
    assert type(old) is SealedRequest
    assert msgspec.json.encode(documents.request(job(OLD_ROW))) == OLD_DOCUMENT
    # The request built now from the same body: the same document, config_hash and sealed
    # body (what run_id covers), and the same plan the runner makes of the old row.
    now = built(parameters={"fast": 12}, start="2024-01-01", label="x")
    assert msgspec.json.encode(documents.request(job(encode(now)))) == OLD_DOCUMENT
    assert documents.run(job(encode(now))) == documents.run(job(OLD_ROW))
    assert (now.config_hash, body_document(now)) == (old.config_hash, body_document(old))
    assert with_plan(old, FILES) == now


def test_refusals_name_the_field() -> None:
    for body, symbol, words in [
        ({"start": "yesterday"}, "INVALID_BODY", "start 'yesterday' is not a time"),
        ({"end": str(2**63)}, "INVALID_BODY", "is past 2^63-1 ns"),
        ({"start": "10", "end": "5"}, "INVALID_BODY", "end 5 precedes start 10"),
        ({"instrument_id": "A/../B.SIM"}, "INVALID_INSTRUMENT_ID", "instrument_id: "),
        ({"parameters": {"fast": "1000"}}, "INVALID_BODY", "parameters: INVALID_PARAMETER: "),
        ({"parameters": {"nope": "1"}}, "INVALID_BODY", "nope"),
    ]:
        with pytest.raises(RequestRefused) as refused:
            built(**body)
        assert (refused.value.symbol, words in refused.value.text) == (symbol, True), refused.value
        assert str(refused.value) == f"{symbol}: {refused.value.text}"
    assert check_body(BacktestBody(strategy_id="ema", start="5"), NOW) == (5, NOW)
    broken = {"strategy.toml": TOML.replace('quantity = "0.1"', 'quantity = "0"')}
    with pytest.raises(RequestRefused, match=f"revision {REVISION} cannot run"):
        build_request(BacktestBody(strategy_id="ema"), REVISION, broken, EXECUTION, NOW)


def test_a_submitted_request_is_stored_once_encoded(tmp_path: Path) -> None:
    with Store(f"sqlite:///{tmp_path / 'spine.db'}") as store:
        revision = save(store, None, "1")
        request = build_request(
            BacktestBody(strategy_id="ema_cross", start="5", end="9"), revision.revision_id, FILES, EXECUTION, NOW
        )
        queued = submit_request(store, request, "gateway-1", NOW)
        assert (queued.job_id, queued.request, queued.instrument_id, queued.start, queued.end) == (
            request.job_id(NOW, "gateway-1"),
            encode(request),
            None,
            5,
            9,
        )
        assert decode(store.job(queued.job_id).request) == request
        assert queued.revision_id == revision.revision_id == rid("1")


def test_the_output_parts_are_named_once() -> None:
    assert [part.value for part in OutputPart] == [
        "report",
        "statistics",
        "equity",
        "equity_daily",
        "orders",
        "fills",
        "positions",
        "signals",
        "markers",
        "retirements",
        "engine_status",
    ]
    assert SERVED_PARTS == tuple(OutputPart)[1:] and served_part("report") is None
    assert served_part("orders") is output_part("orders") is OutputPart.ORDERS and output_part("nope") is None
    # The route table's documents, in the order the OpenAPI document and the registry list them.
    assert OUTPUT_DOCUMENTS == (
        "svc.backtest_statistics",
        "svc.equity_point",
        "svc.order_summary",
        "svc.fill_summary",
        "svc.position_summary",
        "svc.signal_event",
        "svc.chart_marker",
        "svc.signal_retirement",
        "svc.engine_status",
    )
