"""One study as its scheduler drives it (:mod:`spine.studies.scheduler`): its definition,
revision files, Optuna driver and the trials running as backtest jobs; a turn collects the
trials whose jobs ended, asks for more while the study runs, ends it when every trial ran and
writes its progress. A trial's own record (its job, run, result hash, exact objective, reason
and times) is Optuna's user attribute ``spine`` on the trial.

Trials running when a scheduler took a study over are adopted by their job. One asked but
never submitted (its scheduler died in between) is failed with its reason, and on a storage
with heartbeats (PostgreSQL) asked again with its parameters by Optuna's stale-trial callback,
which also catches any trial whose heartbeat (beaten from its ask on) went stale.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec
import optuna
from optuna.storages._heartbeat import BaseHeartbeat, is_heartbeat_enabled
from optuna.trial import FrozenTrial, TrialState

from spine.jobs.records import FINISHED, Job, NotFound
from spine.jobs.request import ExecutionConfig
from spine.jobs.store import Store
from spine.jobs.study_rows import Progress, StudyRecord, StudyStateRefused
from spine.jobs.submission import RequestRefused, build_request, submit_request
from spine.reasons import scrub
from spine.strategies import document
from spine.studies.definition import Definition, Span, trial_body
from spine.studies.driver import StudyDriver
from spine.studies.objective import objective_value
from spine.wire.outputs import OutputPart

__all__ = ["ATTR", "StudyRun", "retried", "submit_run", "trial_record"]

log = logging.getLogger("spine.studies")

#: The user attribute holding Spine's record of a trial.
ATTR = "spine"


def submit_run(
    store: Store,
    definition: Definition,
    files: Mapping[str, str],
    execution: ExecutionConfig,
    submitter_id: str,
    values: dict[str, str],
    span: Span,
    label: str,
) -> Job:
    """Queue one backtest of the study at ``values`` over ``span``.

    # Errors
    :class:`RequestRefused` when the revision does not plan at these values."""
    now = time.time_ns()
    body = trial_body(definition, values, span, label)
    request = build_request(body, definition.revision_id, files, execution, now)
    return submit_request(store, request, submitter_id, now)


def trial_record(trial: FrozenTrial) -> dict[str, Any]:
    """Spine's record of ``trial`` (empty for a trial not yet asked: a copy waiting to be
    asked again holds the record of the one it copies)."""
    record = trial.user_attrs.get(ATTR)
    if trial.state == TrialState.WAITING or not isinstance(record, dict) or record.get("number") != trial.number:
        return {}
    return record


def retried(trials: list[FrozenTrial]) -> set[int]:
    """The numbers of the failed trials asked again (Optuna's retry callbacks record them)."""
    out: set[int] = set()
    for trial in trials:
        out.update(trial.system_attrs.get("retry_history", ()))
    return out


@dataclass
class Flight:
    """A trial running as a backtest job."""

    trial_id: int
    job_id: str
    record: dict[str, Any] = field(default_factory=dict)


class StudyRun:
    """One held study: its definition, revision files, Optuna driver and running trials."""

    def __init__(
        self,
        record: StudyRecord,
        store: Store,
        storage: optuna.storages.BaseStorage,
        owner: str,
        execution: ExecutionConfig,
    ) -> None:
        self.study_id = record.study_id
        self.store, self.storage, self.owner, self.execution = store, storage, owner, execution
        self.definition = Definition.decode(record.definition)
        self.files = store.revision_texts(self.definition.strategy_id, self.definition.revision_id)
        declared = document.plan(self.files, self.definition.parameters).parameters
        self.driver = StudyDriver(
            storage,
            record.study_id,
            self.definition.space(declared),
            self.definition.direction,
            sampler=self.definition.sampler,
            seed=self.definition.seed,
        )
        self.flights: dict[int, Flight] = {}
        self.cancelling = False
        self.beat = 0.0
        self._adopt()

    @property
    def study(self) -> optuna.Study:
        return self.driver.study

    def _adopt(self) -> None:
        """Follow the trials a previous scheduler left running, by their jobs; fail one it
        asked for but never submitted (and, where the storage retries stale trials, ask it
        again with its parameters, as Optuna's heartbeat check would)."""
        for trial in self.study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
            record = trial_record(trial)
            if record.get("job_id"):
                self.flights[trial.number] = Flight(trial._trial_id, record["job_id"], dict(record))
                continue
            reason = "its scheduler stopped before submitting it"
            self._tell(trial.number, trial._trial_id, {"number": trial.number}, None, reason)
            retry = self._heartbeats and self.storage.get_heartbeat_stale_trial_callback()  # type: ignore[attr-defined]
            if retry:
                retry(self.study, self.study.get_trials(deepcopy=True)[trial.number])

    @property
    def _heartbeats(self) -> bool:
        storage = self.storage
        return isinstance(storage, BaseHeartbeat) and is_heartbeat_enabled(storage)

    def step(self, state: str) -> None:
        """One turn (see the module docs)."""
        if self._heartbeats:
            self._heartbeat()
        self._collect()
        if state == "CANCELLED" and not self.cancelling:
            self._cancel()
        if state == "QUEUED":
            state = self._move(("QUEUED",), "RUNNING")
        trials = self.study.get_trials(deepcopy=False)
        if state == "RUNNING":
            self._ask(trials)
            trials = self.study.get_trials(deepcopy=False)
            self._end(trials)
        self.store.record_progress(self.study_id, self.owner, self._progress(trials), time.time_ns())

    def _heartbeat(self) -> None:
        if time.monotonic() - self.beat < self.storage.get_heartbeat_interval():  # type: ignore[attr-defined]
            return
        storage = self.storage
        for flight in self.flights.values():
            storage.record_heartbeat(flight.trial_id)  # type: ignore[attr-defined]
        self.beat = time.monotonic()
        optuna.storages.fail_stale_trials(self.study)

    def _collect(self) -> None:
        if not self.flights:
            return
        store = self.store
        positions = store.job_positions([f.job_id for f in self.flights.values()])
        for number, flight in list(self.flights.items()):
            position = positions.get(flight.job_id)
            if position is None or position[1] in FINISHED:
                self._finish(number, flight)

    def _finish(self, number: int, flight: Flight) -> None:
        store = self.store
        try:
            job = store.job(flight.job_id)
        except NotFound:
            self._tell(number, flight.trial_id, flight.record, None, "its backtest job is gone")
            return
        if job.state == "COMPLETED":
            statistics = msgspec.json.decode(store.outputs(job.job_id, OutputPart.STATISTICS, 0, 1)[0])
            report = msgspec.json.decode(store.outputs(job.job_id, OutputPart.REPORT, 0, 1)[0])
            record = {**flight.record, "run_id": report["run_id"], "result_hash": report["result_hash"]}
            value, reason = objective_value(statistics, self.definition.objective)
            self._tell(number, flight.trial_id, record, value, reason)
        elif job.state == "FAILED":
            self._tell(
                number, flight.trial_id, flight.record, None, f"its backtest failed: {scrub(job.last_error or '')}"
            )
        else:
            self._tell(number, flight.trial_id, flight.record, None, "its backtest job was cancelled")

    def _tell(self, number: int, trial_id: int, record: dict[str, Any], value: Any, reason: str) -> None:
        record = {**record, "finished_ts": str(time.time_ns()), "value": None if value is None else str(value)}
        if reason:
            record["reason"] = reason
        try:
            self.storage.set_trial_user_attr(trial_id, ATTR, record)
            self.driver.tell(number, value)
        except optuna.exceptions.UpdateFinishedTrialError:
            log.warning("study %s: trial %d had already ended (failed as stale?)", self.study_id, number)
        self.flights.pop(number, None)

    def _cancel(self) -> None:
        store = self.store
        for flight in self.flights.values():
            try:
                store.request_cancel(flight.job_id, time.time_ns())
            except Exception as error:  # noqa: BLE001 - ended meanwhile, or gone: collected next turn
                log.debug("study %s: cancel of job %s: %s", self.study_id, flight.job_id, error)
        self.cancelling = True

    def _ask(self, trials: list[FrozenTrial]) -> None:
        used = _used(trials)
        definition = self.definition
        while len(self.flights) < definition.parallel and used < definition.trials:
            asked = self.driver.ask()
            if self._heartbeats:  # from now: a trial never beaten is never found stale
                self.storage.record_heartbeat(asked.trial_id)  # type: ignore[attr-defined]
            used += 1
            record: dict[str, Any] = {"number": asked.number, "started_ts": str(time.time_ns())}
            try:
                job = submit_run(
                    self.store,
                    definition,
                    self.files,
                    self.execution,
                    self.owner,
                    asked.params,
                    definition.training,
                    f"study {self.study_id[:12]} trial {asked.number}",
                )
            except RequestRefused as refused:
                self._tell(asked.number, asked.trial_id, record, None, refused.text)
                continue
            record["job_id"] = job.job_id
            self.storage.set_trial_user_attr(asked.trial_id, ATTR, record)
            self.flights[asked.number] = Flight(asked.trial_id, job.job_id, record)

    def _end(self, trials: list[FrozenTrial]) -> None:
        if self.flights or _used(trials) < self.definition.trials:
            return
        if any(t.state == TrialState.WAITING for t in trials):
            return
        if any(t.state == TrialState.COMPLETE for t in trials):
            self._move(("RUNNING",), "COMPLETED")
            return
        first = min((t for t in trials if t.state == TrialState.FAIL), key=lambda t: t.number, default=None)
        reason = "" if first is None else f"; trial {first.number}: {trial_record(first).get('reason', 'failed')}"
        self._move(("RUNNING",), "FAILED", f"every trial failed{reason}")

    def _move(self, sources: tuple[str, ...], target: str, last_error: str | None = None) -> str:
        try:
            return self.store.move_study(
                self.study_id,
                sources,
                target,
                time.time_ns(),
                last_error,
            ).state
        except StudyStateRefused as refused:
            return refused.state  # paused or cancelled meanwhile: the next turn follows it

    def _progress(self, trials: list[FrozenTrial]) -> Progress:
        counts = {state: 0 for state in TrialState}
        for trial in trials:
            counts[trial.state] += 1
        best = self.driver.best()
        best_value = None
        if best is not None:
            best_value = trial_record(trials[best.number]).get("value")
        return Progress(
            trials=len(trials),
            complete=counts[TrialState.COMPLETE],
            running=len(self.flights),
            waiting=counts[TrialState.WAITING],
            failed=counts[TrialState.FAIL],
            best_trial=None if best is None else best.number,
            best_value=best_value,
        )


def _used(trials: list[FrozenTrial]) -> int:
    """Trials that count against the study's budget: asked, and not failed and asked again."""
    again = retried(trials)
    return sum(1 for t in trials if t.state != TrialState.WAITING and t.number not in again)
