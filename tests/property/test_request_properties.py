"""Property tests: the typed backtest request (``spine.jobs.request``) survives its stored form.

Any request, its text strings drawn from the whole of Unicode (less lone surrogates, which
canonical JSON refuses) and its integers from the 64-bit extremes, encodes to canonical JSON
text and decodes to an equal request; the same text less its plan (a row stored before
requests carried one) decodes to the sealed part alone, equal field by field.
"""

from __future__ import annotations

import json

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from spine._core import canonicalize
from spine.jobs.request import (
    BacktestRequest,
    ExecutionConfig,
    ResolvedRun,
    SealedBody,
    SealedRequest,
    decode,
    decode_stored,
    encode,
)
from spine.strategies.plan import FeatureDecl, ParameterDecl, StrategyPlan

TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
I64 = st.integers(-(2**63), 2**63 - 1)
DIGITS = st.integers(0, 2**63 - 1).map(str)
CHANNEL = st.sampled_from(["EXTERNAL", "INTERNAL"])
VALUES = st.dictionaries(TEXT, TEXT, max_size=4)

BODIES = st.builds(
    SealedBody,
    strategy_id=TEXT,
    revision_id=st.none() | TEXT,
    instrument_id=st.none() | TEXT,
    start=st.none() | DIGITS,
    end=st.none() | DIGITS,
    resolution=st.none() | TEXT,
    channel=st.none() | CHANNEL,
    parameters=st.none() | VALUES,
    label=st.none() | TEXT,
)
RUNS = st.builds(
    ResolvedRun,
    strategy_id=TEXT,
    revision_id=TEXT,
    instrument_id=st.none() | TEXT,
    start=DIGITS,
    end=DIGITS,
    resolution=TEXT,
    channel=CHANNEL,
    values=VALUES,
)
EXECUTIONS = st.builds(ExecutionConfig, capital=TEXT, fee_model=TEXT, fill_model=TEXT, seed=I64)
PLANS = st.builds(
    StrategyPlan,
    name=TEXT,
    template_id=st.none() | TEXT,
    instruments=st.lists(TEXT, max_size=3),
    resolution=TEXT,
    channel=CHANNEL,
    direction=st.sampled_from(["LONG_ONLY", "SHORT_ONLY", "LONG_SHORT"]),
    parameters=st.lists(
        st.builds(
            ParameterDecl, name=TEXT, type=st.sampled_from(["integer", "decimal"]), default=TEXT, min=TEXT, max=TEXT
        ),
        max_size=3,
    ),
    values=VALUES,
    features=st.lists(st.builds(FeatureDecl, feature_id=TEXT, implementation=TEXT, parameters=VALUES), max_size=3),
    rules=VALUES,
    quantity=TEXT,
    stop_loss=st.none() | TEXT,
    take_profit=st.none() | TEXT,
)
REQUESTS = st.builds(BacktestRequest, body=BODIES, spec=RUNS, config_hash=TEXT, execution=EXECUTIONS, plan=PLANS)


@given(REQUESTS)
def test_a_request_round_trips_through_its_stored_text(request: BacktestRequest) -> None:
    text = encode(request)
    assert canonicalize(text) == text.encode()
    assert decode(text) == request
    assert decode_stored(text) == request


@given(REQUESTS)
def test_a_row_without_its_plan_reads_as_the_sealed_request(request: BacktestRequest) -> None:
    stored = json.loads(encode(request))
    del stored["plan"]
    old = decode_stored(json.dumps(stored))
    assert type(old) is SealedRequest
    assert msgspec.structs.asdict(old) == {
        key: value for key, value in msgspec.structs.asdict(request).items() if key != "plan"
    }
