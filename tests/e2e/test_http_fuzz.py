"""A fuzz run driven by the node's own OpenAPI document (schemathesis) over the v2 (and v1) routes
of a running ``spine node`` and of a ``spine screener`` over it: no 5xx, and every JSON body is a
schema-valid document or the error envelope (checked by the independent validator, not by
schemathesis, so no schema is fetched from the network). Streams are left to the contract tests.
Cases come from schemathesis' hypothesis strategies, driven here directly (its pytest plugin does
not run on pytest 9)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import schemathesis
from gateways import spawn_gateway
from hypothesis import HealthCheck, given, settings
from nodes import free_port, get, post, stop, wait_for
from screeners import screener

from reference.wire_validator import validate

__all__ = ["screener"]  # the fixture, imported for this module's tests


#: Examples per operation: a quick default; SPINE_FUZZ_EXAMPLES=200 for a long run.
FUZZ_EXAMPLES = int(os.environ.get("SPINE_FUZZ_EXAMPLES", "5"))


def check(case: Any, url: str) -> None:
    response = case.call(base_url=url, timeout=10)
    # 501 CAPABILITY_DEFERRED and 503 NOT_READY are contract answers, not failures.
    assert response.status_code < 500 or response.status_code in (501, 503), (case.path, response.text)
    body = json.loads(response.content)
    if response.status_code >= 400:
        validate(body, "v1.error_envelope" if body.get("version") == "spine.v1" else "svc.error_envelope")
    elif isinstance(body, dict) and "schema_id" in body:
        validate(body)


def fuzz(url: str, chosen: Callable[[str], bool] = lambda path: True) -> int:
    """Every non-stream operation of ``url``'s OpenAPI document whose path is ``chosen``; how
    many were fuzzed."""
    schema = schemathesis.openapi.from_url(url + "/v2/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    fuzzed = 0
    for operation in operations:
        if operation.path.startswith("/v2/stream/") or operation.path == "/stream" or not chosen(operation.path):
            continue

        @given(case=operation.as_strategy())
        @settings(max_examples=FUZZ_EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        def run(case: Any) -> None:
            check(case, url)

        run()
        fuzzed += 1
    return fuzzed


def test_no_5xx_and_every_body_is_a_valid_document(base: str) -> None:
    assert fuzz(base) >= 60


def test_the_screener_answers_no_5xx_and_valid_documents(screener: str) -> None:
    # Screen bodies are generated from the definition's own schema: valid ones are screened,
    # the rest refused with the envelope.
    assert fuzz(screener) >= 60


def test_the_gateways_own_routes_answer_no_5xx_and_valid_documents(tmp_path: Path) -> None:
    """The strategy and backtest routes of a gateway (private-operator, so its COMMANDs are
    served; no node or worker behind it): save bodies generated from the save request's own
    schema, sealed backtest bodies from the body's. A saved template gives the GETs something
    to find besides what the fuzzer invents."""
    dead = f"http://127.0.0.1:{free_port()}"
    process, url = spawn_gateway(tmp_path, [dead], dead, SPINE_DEPLOYMENT_MODE="private-operator")
    try:
        wait_for(process, lambda: get(url + "/v2/health")[0] == 200, "answering")
        files = get(url + "/v2/strategy-templates/ema_cross")[1]["files"]
        assert (
            post(
                url + "/v2/strategies",
                {
                    "version": "spine.v2",
                    "schema_id": "svc.strategy_revision_save_request",
                    "schema_version": 2,
                    "strategy_id": "fuzzed",
                    "parent_revision_id": None,
                    "message": "",
                    "files": files,
                },
            )[0]
            == 201
        )
        own = (
            "/v2/strateg",
            "/v2/backtests",
            "/v2/conditions",
            "/v2/authoring",
            "/signals",
            "/chart-markers",
            "/retirements",
        )
        assert fuzz(url, lambda path: path.startswith(own)) >= 18
    finally:
        stop(process)
