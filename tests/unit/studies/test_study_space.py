"""A study's search space (:mod:`spine.studies.space`): each refusal names the parameter, the
value and what is allowed; every suggestion lies on the declared grid as exact text, whatever
Optuna's sampler draws (a random sampler over random grids, and the float-to-grid mapping
checked point by point against ``decimal``)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import optuna
import pytest
from hypothesis import given
from hypothesis import strategies as st

from spine.strategies.plan import ParameterDecl
from spine.studies.space import Choices, DecimalRange, IntegerRange, SpaceError, describe, parse_space

DECLARED = [
    ParameterDecl("fast", "integer", "10", "2", "100"),
    ParameterDecl("slow", "integer", "30", "5", "400"),
    ParameterDecl("quantity", "decimal", "0.1", "0.001", "1000000"),
]


def test_a_space_of_ranges_and_choices_in_name_order() -> None:
    space = parse_space(
        {
            "slow": {"choices": [20, "30", 40]},
            "fast": {"low": 5, "high": 20},
            "quantity": {"low": "0.5", "high": "2", "step": "0.25"},
        },
        DECLARED,
    )
    assert space.dimensions == (
        IntegerRange("fast", 5, 20, 1),
        DecimalRange("quantity", Decimal("0.5"), Decimal("2"), Decimal("0.25")),
        Choices("slow", ("20", "30", "40")),
    )
    assert describe(space) == {
        "fast": {"low": "5", "high": "20", "step": "1"},
        "quantity": {"low": "0.5", "high": "2", "step": "0.25"},
        "slow": {"choices": ["20", "30", "40"]},
    }


@pytest.mark.parametrize(
    ("search", "words"),
    [
        ({}, "at least one declared parameter"),
        ([], "at least one declared parameter"),
        (
            {"period": {"low": 1, "high": 2}},
            "search.period: not a declared parameter of the revision; declared: fast, quantity, slow",
        ),
        ({"fast": 5}, 'search.fast: an object, {"low", "high", "step"} or {"choices"}'),
        ({"fast": {"low": 5}}, 'allowed "low" and "high" with an optional "step", or "choices" alone'),
        ({"fast": {"low": 5, "high": 9, "choices": [5]}}, 'or "choices" alone'),
        (
            {"fast": {"low": 5.0, "high": 9}},
            "search.fast.low: a float (5.0); allowed a JSON integer or an exact decimal string",
        ),
        ({"fast": {"low": "5.5", "high": 9}}, "search.fast.low: '5.5'; fast is an integer parameter"),
        ({"fast": {"low": True, "high": 9}}, "search.fast.low: bool"),
        ({"fast": {"low": 1, "high": 9}}, "search.fast.low: 1 is outside fast's declared range 2..100"),
        ({"fast": {"low": 9, "high": 5}}, "search.fast: low 9 is above high 5"),
        ({"fast": {"low": 5, "high": 9, "step": 0}}, "search.fast.step: 0; allowed above 0"),
        ({"fast": {"low": 5, "high": 9, "step": 3}}, "high - low (4) is not a whole number of steps of 3"),
        ({"quantity": {"low": "0.5", "high": "2"}}, "search.quantity.step: required for a decimal parameter"),
        ({"quantity": {"low": "1e-3", "high": "2", "step": "0.001"}}, "allowed exact decimal text"),
        ({"quantity": {"low": "0.001", "high": "1000000", "step": "0.001"}}, "allowed at most 1,000,000"),
        ({"slow": {"choices": []}}, "search.slow.choices: a list of 1 to 1,000 values"),
        ({"slow": {"choices": [20, "20"]}}, "20, 20 repeats a value"),
        ({"slow": {"choices": [20, 500]}}, "search.slow.choices[1]: 500 is outside slow's declared range 5..400"),
    ],
)
def test_a_space_that_cannot_be_searched_is_refused_in_words(search: Any, words: str) -> None:
    with pytest.raises(SpaceError) as refused:
        parse_space(search, DECLARED)
    assert words in str(refused.value), str(refused.value)


@st.composite
def decimal_grids(draw: st.DrawFn) -> DecimalRange:
    scale = draw(st.integers(0, 6))
    step = Decimal(draw(st.integers(1, 10**4))).scaleb(-scale)
    low = Decimal(draw(st.integers(-(10**6), 10**6))).scaleb(-scale)
    return DecimalRange("x", low, low + step * draw(st.integers(0, 500)), step)


@given(decimal_grids(), st.data())
def test_every_grid_point_maps_to_itself_exactly(grid: DecimalRange, data: st.DataObject) -> None:
    k = data.draw(st.integers(0, grid.steps))
    point = grid.low + k * grid.step
    assert Decimal(grid.on_grid(float(point))) == point
    # Beyond the ends (a sampler's float drift) clips to them.
    assert Decimal(grid.on_grid(float(grid.low) - 1e9)) == grid.low
    assert Decimal(grid.on_grid(float(grid.high) + 1e9)) == grid.high


@given(st.integers(0, 2**32 - 1), decimal_grids(), st.integers(2, 50), st.integers(0, 40))
def test_a_random_sampler_draws_only_grid_points(seed: int, grid: DecimalRange, low: int, span: int) -> None:
    declared = [
        ParameterDecl("n", "integer", str(low), str(low), str(low + 2 * span)),
        ParameterDecl("x", "decimal", "0", str(min(grid.low, Decimal(0))), str(max(grid.high, Decimal(1)))),
    ]
    space = parse_space({"n": {"low": low, "high": low + 2 * span, "step": 2}, "x": describe_range(grid)}, declared)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=seed))
    for _ in range(5):
        values = space.suggest(study.ask())
        n, x = int(values["n"]), Decimal(values["x"])
        assert low <= n <= low + 2 * span and (n - low) % 2 == 0
        assert grid.low <= x <= grid.high and (x - grid.low) % grid.step == 0
        assert values["x"] == format(x, "f") and "E" not in values["x"]


def describe_range(grid: DecimalRange) -> dict[str, str]:
    return {"low": format(grid.low, "f"), "high": format(grid.high, "f"), "step": format(grid.step, "f")}
