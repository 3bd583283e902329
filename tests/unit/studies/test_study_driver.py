"""A study driven with ask and tell (:mod:`spine.studies.driver`) over Optuna's journal file:
seeded, the same tells give the same trials in a second storage; a failed trial is Optuna's
FAIL and never the best; a study loaded by name continues where it stood."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import optuna
import pytest

from spine.strategies.plan import ParameterDecl
from spine.studies.driver import StudyDriver, journal_storage
from spine.studies.space import parse_space

DECLARED = [
    ParameterDecl("fast", "integer", "10", "2", "100"),
    ParameterDecl("quantity", "decimal", "0.1", "0.001", "10"),
]
SPACE = parse_space({"fast": {"low": 2, "high": 40}, "quantity": {"low": "0.5", "high": "3", "step": "0.25"}}, DECLARED)


def objective(params: dict[str, str]) -> Decimal:
    """A deterministic score with its best at fast 17, quantity 1.75."""
    return -abs(Decimal(params["fast"]) - 17) - abs(Decimal(params["quantity"]) - Decimal("1.75"))


def drive(driver: StudyDriver, trials: int) -> list[tuple[int, dict[str, str]]]:
    asked = []
    for _ in range(trials):
        trial = driver.ask()
        asked.append((trial.number, trial.params))
        driver.tell(trial.number, objective(trial.params))
    return asked


@pytest.mark.parametrize("sampler", ["TPE", "RANDOM"])
def test_a_seeded_study_draws_the_same_trials_twice(tmp_path: Path, sampler: str) -> None:
    runs = [
        drive(StudyDriver(journal_storage(tmp_path / f"{k}.log"), "s", SPACE, "MAXIMIZE", sampler=sampler, seed=7), 15)
        for k in (1, 2)
    ]
    assert runs[0] == runs[1] and [n for n, _ in runs[0]] == list(range(15))
    other = drive(StudyDriver(journal_storage(tmp_path / "3.log"), "s", SPACE, "MAXIMIZE", sampler=sampler, seed=8), 15)
    assert other != runs[0]


def test_a_failed_trial_is_never_the_best_and_a_loaded_study_continues(tmp_path: Path) -> None:
    storage = journal_storage(tmp_path / "study.log")
    driver = StudyDriver(storage, "s", SPACE, "MINIMIZE", seed=1)
    assert driver.best() is None
    failed = driver.ask()
    driver.tell(failed.number, None)
    assert driver.best() is None
    scored = driver.ask()
    driver.tell(scored.number, Decimal("2.5"))
    best = driver.best()
    assert best is not None and (best.number, best.value) == (scored.number, 2.5)
    states = [t.state for t in driver.study.get_trials(deepcopy=False)]
    assert states == [optuna.trial.TrialState.FAIL, optuna.trial.TrialState.COMPLETE]
    again = StudyDriver(journal_storage(tmp_path / "study.log"), "s", SPACE, "MINIMIZE", seed=1)
    assert again.ask().number == 2


def test_an_unknown_sampler_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="sampler 'CMA'; allowed: TPE, RANDOM"):
        StudyDriver(journal_storage(tmp_path / "s.log"), "s", SPACE, "MAXIMIZE", sampler="CMA")
