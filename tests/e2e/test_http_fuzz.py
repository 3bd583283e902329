"""A fuzz run driven by the node's own OpenAPI document (schemathesis) over the v2 (and v1) routes of a
running ``spine node`` and of a ``spine screener`` over it: no 5xx, and every JSON body is a schema-valid document or the error
envelope (checked by the independent validator, not by schemathesis, so no schema is fetched
from the network). Streams are left to the contract tests. Cases come from schemathesis'
hypothesis strategies, driven here directly (its pytest plugin does not run on pytest 9)."""

from __future__ import annotations

import json
import os
from typing import Any

import schemathesis
from hypothesis import HealthCheck, given, settings

from reference.wire_validator import validate
from screeners import screener

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


def fuzz(url: str) -> int:
    """Every non-stream operation of ``url``'s OpenAPI document; how many were fuzzed."""
    schema = schemathesis.openapi.from_url(url + "/v2/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    fuzzed = 0
    for operation in operations:
        if operation.path.startswith("/v2/stream/") or operation.path == "/stream":
            continue

        @given(case=operation.as_strategy())
        @settings(max_examples=FUZZ_EXAMPLES, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
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
