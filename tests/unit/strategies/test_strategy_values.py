"""The size-step rule a run and a submit share: a quantity is a positive multiple of the
instrument's size step (``10^-size_precision``), read from its text, never rounded."""

from __future__ import annotations

import pytest

from spine.strategies.values import size_step_problem


@pytest.mark.parametrize(("quantity", "precision"), [("1", 0), ("10", 0), ("0.1", 1), ("0.100", 1), ("2.5", 3)])
def test_multiples_of_the_step_pass(quantity: str, precision: int) -> None:
    assert size_step_problem(quantity, "X.SIM", precision) is None


@pytest.mark.parametrize(
    ("quantity", "precision", "step"), [("0.1", 0, "1"), ("0.0001", 3, "0.001"), ("0", 2, "0.01"), ("9" * 40, 0, "1")]
)
def test_the_rest_is_refused_naming_quantity_instrument_and_step(quantity: str, precision: int, step: str) -> None:
    problem = size_step_problem(quantity, "AAPL.XNAS", precision)
    assert problem is not None and problem.startswith(
        f"quantity {quantity} must be a positive multiple of AAPL.XNAS's size step {step} (size precision {precision})"
    )
