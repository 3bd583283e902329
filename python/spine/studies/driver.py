"""One study's Optuna side, driven with ask and tell: Optuna's ``optimize`` loop owns its
process and has no pause, so the study's scheduler asks for a trial when it wants one, runs it
as a backtest, and tells Optuna the objective when the report lands (or FAIL when the run
failed). Pausing is not asking.

The sampler is Optuna's (``TPE`` by default, or ``RANDOM``), seeded; asked and told in the
same order, a study draws the same parameters. Objectives reach Optuna as floats (its
samplers need numbers); the exact decimal stays with the study's own records. The storage is
Optuna's: a journal file (``JournalFileBackend``) by default, or an RDB URL.
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Literal

import optuna

from spine.studies.space import SearchSpace

__all__ = ["SAMPLERS", "Asked", "Best", "StudyDriver", "journal_storage"]

Direction = Literal["MAXIMIZE", "MINIMIZE"]
SAMPLERS = ("TPE", "RANDOM")
_OPTIMIZE_ONLY = "Heartbeat of storage is supposed to be used with Study.optimize"

# Optuna reports every trial at INFO; the study's own records and events say what happened.
logging.getLogger("optuna").setLevel(logging.WARNING)


def journal_storage(path: Path) -> optuna.storages.BaseStorage:
    """Optuna's journal storage in one file (its lock file beside it)."""
    from optuna.storages.journal import JournalFileBackend

    path.parent.mkdir(parents=True, exist_ok=True)
    return optuna.storages.JournalStorage(JournalFileBackend(str(path)))


@dataclass(frozen=True)
class Asked:
    """A trial Optuna asked for: its number, its storage id and one exact value per searched
    parameter."""

    number: int
    trial_id: int
    params: dict[str, str]


@dataclass(frozen=True)
class Best:
    number: int
    value: float


class StudyDriver:
    """Asks and tells one Optuna study (see the module docs); created or loaded by name."""

    def __init__(
        self,
        storage: optuna.storages.BaseStorage | str,
        name: str,
        space: SearchSpace,
        direction: Direction,
        *,
        sampler: str = "TPE",
        seed: int = 0,
    ) -> None:
        if sampler not in SAMPLERS:
            raise ValueError(f"sampler {sampler!r}; allowed: {', '.join(SAMPLERS)}")
        chosen = optuna.samplers.TPESampler(seed=seed) if sampler == "TPE" else optuna.samplers.RandomSampler(seed=seed)
        self.space = space
        self.storage = storage
        self.study = optuna.create_study(
            storage=storage,
            study_name=name,
            direction=optuna.study.StudyDirection[direction],
            sampler=chosen,
            load_if_exists=True,
        )

    def ask(self) -> Asked:
        with warnings.catch_warnings():
            # A storage with heartbeats expects Study.optimize to beat them; the scheduler
            # beats its trials itself (spine.studies.scheduler).
            warnings.filterwarnings("ignore", _OPTIMIZE_ONLY, UserWarning)
            trial = self.study.ask()
        # Optuna names a trial in its storage by this id (no public accessor on a Trial).
        return Asked(trial.number, trial._trial_id, self.space.suggest(trial))

    def tell(self, number: int, value: Decimal | None) -> None:
        """The trial's objective; None when its run failed (Optuna's FAIL)."""
        if value is None:
            self.study.tell(number, state=optuna.trial.TrialState.FAIL)
        else:
            self.study.tell(number, float(value))

    def best(self) -> Best | None:
        """The best complete trial so far, None before one completed."""
        complete = self.study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
        if not complete:
            return None
        best = self.study.best_trial
        assert best.value is not None  # a complete single-objective trial has one
        return Best(best.number, float(best.value))
