"""The study scheduler: a gateway's loop that drives the studies it holds, each with ask and
tell (``spine.studies.driver``).

Each turn, for each study it holds (``StudyRows.claim_studies``), its
:class:`~spine.studies.study_run.StudyRun` takes one step:

1. collect: every trial whose backtest job ended is told to Optuna, with the objective read
   from the job's statistics (COMPLETE) or FAIL with the reason (the job failed or was
   cancelled, or the statistic is null for its run);
2. ask: while the study is RUNNING, fewer than ``parallel`` trials run and fewer than
   ``trials`` were used (a failed trial asked again does not count twice), ask Optuna for a
   trial and submit it as a backtest job on the training window (``submit_run``: the path of
   every ``POST /v2/backtests``);
3. end: a RUNNING study with every trial used and none running or waiting is COMPLETED (or
   FAILED when no trial completed);
4. write the progress (trials by state, the best so far) to the study's row.

A paused study is only collected; a cancelled one has its running trials' jobs cancelled once
and is collected until none runs. A study it cannot run (its revision gone) ends FAILED saying
why; any other failure of a turn is logged and the study taken up afresh next turn.
"""

from __future__ import annotations

import logging
import time

import optuna

from spine.jobs.records import NotFound
from spine.jobs.request import ExecutionConfig
from spine.jobs.store import Store
from spine.jobs.study_rows import StudyStateRefused
from spine.reasons import scrub
from spine.strategies.errors import StrategyError
from spine.studies.study_run import StudyRun

__all__ = ["RENEW_SECS", "Scheduler"]

log = logging.getLogger("spine.studies")

#: A scheduler renews its leases this often; another takes a study over after ``stale_secs``.
RENEW_SECS = 2.0


class Scheduler:
    """Drives the studies this gateway holds (see the module docs); :meth:`turn` is one turn
    over all of them, blocking (the gateway runs it in a thread)."""

    def __init__(
        self,
        store: Store,
        storage: optuna.storages.BaseStorage,
        owner: str,
        execution: ExecutionConfig,
        stale_secs: float = 30.0,
    ) -> None:
        self.store = store
        self.storage = storage
        self.owner = owner
        self.execution = execution
        self.stale_ns = int(stale_secs * 1e9)
        self.runs: dict[str, StudyRun] = {}
        self._claimed = 0.0

    def turn(self, claim: bool = False) -> None:
        """Step every held study; claim (renew leases, take up new and abandoned studies) when
        ``claim`` or every :data:`RENEW_SECS`."""
        if claim or time.monotonic() - self._claimed >= RENEW_SECS:
            held = [r.study_id for r in self.store.claim_studies(self.owner, time.time_ns(), self.stale_ns)]
            for gone in set(self.runs) - set(held):
                del self.runs[gone]
            self._claimed = time.monotonic()
        else:
            held = list(self.runs)
        for study_id in held:
            self._step(study_id)

    def _step(self, study_id: str) -> None:
        try:
            record = self.store.study(study_id)
            run = self.runs.get(study_id)
            if run is None:
                try:
                    run = self.runs[study_id] = StudyRun(record, self.store, self.storage, self.owner, self.execution)
                except (NotFound, StrategyError) as error:  # its revision is gone or no longer plans
                    self._give_up(study_id, f"the study cannot run: {scrub(str(error))}")
                    return
            run.step(record.state)
            if record.state not in ("QUEUED", "RUNNING") and not run.flights:
                self.runs.pop(study_id, None)  # nothing left to do until an action wakes it
        except Exception:
            log.exception("study %s: the scheduler's turn failed; it is tried again next turn", study_id)
            self.runs.pop(study_id, None)

    def _give_up(self, study_id: str, reason: str) -> None:
        log.warning("study %s: %s", study_id, reason)
        try:
            self.store.move_study(study_id, ("QUEUED", "RUNNING", "PAUSED"), "FAILED", time.time_ns(), reason)
        except StudyStateRefused:
            pass  # it ended meanwhile
