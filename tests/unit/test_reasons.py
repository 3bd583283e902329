"""Public reasons (``spine.reasons``): a Spine refusal keeps its symbol and text, anything else
is INTERNAL; what a public route serves from stored runs carries no traceback, path, address
or exception class name, rows written before the rule included."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from spine.backtest.api import BacktestError, RunFailed
from spine.errors import SpineError
from spine.jobs import documents
from spine.reasons import INTERNAL_RUN, public_reason, scrub


def test_refusals_keep_their_words_and_the_rest_is_internal() -> None:
    assert (
        public_reason(BacktestError("NO_BARS: no 1m bars of X.SIM in the span"))
        == "NO_BARS: no 1m bars of X.SIM in the span"
    )
    assert public_reason(RunFailed("CANCELLED: at bar close 5", [])) == "CANCELLED: at bar close 5"
    assert public_reason(SpineError("an unled text")) == INTERNAL_RUN
    assert public_reason(KeyError("/srv/x")) == INTERNAL_RUN
    assert (
        public_reason(BacktestError("CATALOG_BUSY: /srv/spine/catalog/external kept changing"))
        == "CATALOG_BUSY: <path> kept changing"
    )


@pytest.mark.parametrize(
    "text, public",
    [
        ("Traceback (most recent call last):\n  File \"/x/y.py\", line 1\nKeyError: 'a'", INTERNAL_RUN),
        ("RuntimeError: boom", INTERNAL_RUN),
        ("decimal.InvalidOperation: x", INTERNAL_RUN),
        ("INVALID_QUANTITY: [<class 'decimal.InvalidOperation'>]", INTERNAL_RUN),
        (
            "NO_BARS: looked under /work/var/spine/catalog/external, /tmp/c/internal",
            "NO_BARS: looked under <path>, <path>",
        ),
        ("UPSTREAM_UNAVAILABLE: http://127.0.0.1:8700: refused", "UPSTREAM_UNAVAILABLE: <address>: refused"),
        ("node 10.0.0.7:8700 or localhost:99 or [::1]:80", "node <address> or <address> or <address>"),
        ("see GET /v2/strategies/x/validate", "see GET /v2/strategies/x/validate"),
        ("EUR/USD.SIM: quantity 1/10 is finer than 0.01", "EUR/USD.SIM: quantity 1/10 is finer than 0.01"),
        ("worker w2 lost during attempt 2 of 2", "worker w2 lost during attempt 2 of 2"),
    ],
)
def test_scrub(text: str, public: str) -> None:
    assert scrub(text) == public


def test_stored_reasons_are_scrubbed_on_the_way_out() -> None:
    """A job failed before these rules stored its traceback and class name: neither is served."""
    job = SimpleNamespace(
        job_id="j",
        strategy_id="s",
        revision_id="r",
        state="FAILED",
        instrument_id=None,
        start=0,
        end=1,
        submitted_ts=1,
        started_ts=2,
        finished_ts=3,
        execution=None,
        run_id=None,
        last_error="ValueError: /srv/spine/catalog missing",
    )
    assert documents.detail(job)["last_error"] == INTERNAL_RUN
    row = SimpleNamespace(
        job_id="j",
        sequence=3,
        type="LOG",
        state=None,
        level="ERROR",
        ts_event=4,
        message='Traceback (most recent call last):\n  File "/srv/x.py"',
    )
    assert documents.event(row)["message"] == INTERNAL_RUN
