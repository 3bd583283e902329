"""The node status document's derived values: rates (exact, half-even at scale 3) and the
running state read from the engine lifecycle."""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal
from fractions import Fraction
from typing import get_args

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spine.node.reads import _NODE_STATE, _rate
from spine.node.status import Lifecycle


@pytest.mark.parametrize(
    ("count", "per_ns", "elapsed", "expected"),
    [
        (0, 10**9, 10**9, "0.000"),
        (1, 10**9, 3 * 10**9, "0.333"),
        (2, 10**9, 3 * 10**9, "0.667"),
        (5, 10**9, 2 * 10**12, "0.002"),  # 0.0025 -> half to even
        (7, 10**9, 2 * 10**12, "0.004"),  # 0.0035 -> half to even
        (120, 60 * 10**9, 60 * 10**9, "120.000"),
    ],
)
def test_rates_are_exact_at_scale_three(count: int, per_ns: int, elapsed: int, expected: str) -> None:
    assert _rate(count, per_ns, elapsed) == expected


@given(st.integers(0, 2**63 - 1), st.sampled_from([10**9, 60 * 10**9]), st.integers(1, 2**64 - 1))
def test_rates_match_rational_arithmetic(count: int, per_ns: int, elapsed: int) -> None:
    exact = Fraction(count * per_ns, elapsed)
    reference = (
        (Decimal(exact.numerator) / Decimal(exact.denominator)).quantize(Decimal("0.001"), rounding=ROUND_HALF_EVEN)
        if exact < 10**20
        else None
    )
    if reference is not None:
        assert _rate(count, per_ns, elapsed) == str(reference)


def test_every_lifecycle_maps_to_a_node_state_and_a_failed_run_is_stopped() -> None:
    assert set(_NODE_STATE) == set(get_args(Lifecycle))
    assert _NODE_STATE["FAILED"] == _NODE_STATE["COMPLETED"] == "STOPPED"
    assert _NODE_STATE["CHECKPOINTED"] == "RUNNING"
