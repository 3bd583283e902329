"""A study's objective and windows (:mod:`spine.studies.objective`): the metrics are exactly the
strategy statistics of ``svc.backtest_statistics`` (read from its schema, not copied), each
refusal names what is allowed, and a trial's value is the report's exact decimal or a reason."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from spine.studies.objective import METRICS, Objective, ObjectiveError, Windows, objective_value

ROOT = Path(__file__).resolve().parents[3]
SCHEMA = json.loads((ROOT / "schemas" / "own" / "svc.backtest_statistics.json").read_text())
EXAMPLE = json.loads((ROOT / "tests" / "data" / "wire_examples" / "svc.backtest_statistics.json").read_text())


def test_the_metrics_are_the_numeric_statistics_of_the_report() -> None:
    numeric = {
        name
        for name, spec in SCHEMA["properties"].items()
        if spec.get("type") != "array" and any(k in json.dumps(spec) for k in ("decimal", "count", "nanos"))
    }
    # The run's identities and its bar count, the instrument's own return and the capital the
    # service fixed are not the strategy's.
    assert set(METRICS) == numeric - {"starting_balance", "buy_and_hold_return", "bars", "trading_days_per_year"}


def test_a_trials_value_is_the_reports_exact_decimal_or_a_reason() -> None:
    for metric in METRICS:
        value, why = objective_value(EXAMPLE, Objective(metric, "MAXIMIZE"))
        if EXAMPLE[metric] is None:
            assert value is None and f"{metric} is null" in why
        else:
            assert value == Decimal(str(EXAMPLE[metric])) and why == ""
    value, why = objective_value({**EXAMPLE, "sharpe": None}, Objective("sharpe", "MINIMIZE"))
    assert value is None and why == "sharpe is null in the trial's report (undefined for its run)"


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: Objective("buy_and_hold_return", "MAXIMIZE"), "objective.metric 'buy_and_hold_return': allowed"),
        (lambda: Objective("sharpe", "UP"), "objective.direction 'UP': allowed MAXIMIZE, MINIMIZE"),
        (lambda: Windows((10, 5)), "training: start 10 is after end 5"),
        (lambda: Windows((1, 5), (9, 8)), "holdout: start 9 is after end 8"),
        (lambda: Windows((1, 5), (5, 8)), "holdout.start 5 is not after training.end 5"),
    ],
)
def test_an_objective_or_windows_a_study_cannot_have_are_refused(make: object, words: str) -> None:
    with pytest.raises(ObjectiveError) as refused:
        make()  # type: ignore[operator]
    assert words in str(refused.value), str(refused.value)


def test_windows_that_follow_each_other_are_kept() -> None:
    assert Windows((1, 5), (6, 9)).holdout == (6, 9) and Windows((1, 5)).holdout is None
