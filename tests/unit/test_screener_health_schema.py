"""svc.screener_health: the unreachable-screener document the spec describes validates, and a
STOPPED document without a real error does not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from spine import schemas

EXAMPLE = Path(__file__).parents[1] / "data" / "wire_examples" / "svc.screener_health.json"


def example(**changes: Any) -> dict[str, Any]:
    return {**json.loads(EXAMPLE.read_text()), **changes}


def test_an_unreachable_screener_is_stopped_with_zero_connections_and_null_egress() -> None:
    document = example()
    assert schemas.validator_for("svc.screener_health").is_valid(document)
    assert document["process_state"] == "STOPPED" and document["egress"] is None
    assert document["connections"] == {"open": 0, "accepted": 0, "closed": 0, "refused": 0, "upstreams": []}


@pytest.mark.parametrize("last_error", [None, ""])
def test_stopped_without_a_real_error_is_refused(last_error: str | None) -> None:
    assert not schemas.validator_for("svc.screener_health").is_valid(example(last_error=last_error))


def test_a_running_screener_reports_its_counters() -> None:
    document = example(
        process_state="RUNNING",
        last_error=None,
        processed=120_000,
        dropped=3,
        input_lag_nanos="250000000",
        checkpoint_age_nanos="4000000000",
        egress={
            "subscribers": 2,
            "accepted": 3,
            "refused": 0,
            "events_sent": 5,
            "bytes_sent": 9_000,
            "events_dropped": 0,
        },
        connections={
            "open": 1,
            "accepted": 2,
            "closed": 1,
            "refused": 4,
            "upstreams": [
                {
                    "node": "node-1",
                    "state": "RUNNING",
                    "open": 1,
                    "accepted": 2,
                    "closed": 1,
                    "refused": 4,
                    "last_error": "UPSTREAM_UNAVAILABLE: http://127.0.0.1:8700: ...",
                }
            ],
        },
    )
    assert schemas.validator_for("svc.screener_health").is_valid(document)
    for missing in ("connections", "egress", "dropped"):
        assert not schemas.validator_for("svc.screener_health").is_valid(
            {k: v for k, v in document.items() if k != missing}
        )
