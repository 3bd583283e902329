"""The study routes the gateway answers: create (a sealed body, checked against its revision
and the bars it needs, then left to the scheduler, :mod:`spine.studies.scheduler`), the study
list and detail, the trials (Optuna's, with Spine's record of each), and the actions: pause,
resume, cancel, retry, best, holdout and promote.

States and transitions are the store's (:mod:`spine.jobs.study_rows`)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, cast

import msgspec
import optuna
from optuna.trial import FrozenTrial, TrialState

from spine.gateway.backtests import revision_files
from spine.gateway.pages import db_page, page_document
from spine.gateway.runnable import Run, RunChecks
from spine.gateway.strategies import IDENTITY, save_files
from spine.http.app import Relayed
from spine.http.bodies import StudyBody
from spine.http.errors import HttpError
from spine.http.request import Query
from spine.jobs.records import NotFound
from spine.jobs.request import ExecutionConfig
from spine.jobs.store import Store
from spine.jobs.study_rows import STUDY_STATES, StudyRecord, StudyState, StudyStateRefused
from spine.jobs.submission import RequestRefused, build_request
from spine.reasons import scrub
from spine.studies.definition import Definition, DefinitionError, Span, resolve, spans, study_id, trial_body
from spine.studies.documents import exact_params, study_document, trial_document
from spine.studies.promote import PromoteError, with_defaults
from spine.studies.study_run import retried, submit_run, trial_record
from spine.wire.outputs import OutputPart

__all__ = ["StudyHandlers"]

CREATE = "POST /v2/studies"
_encode = msgspec.json.Encoder().encode
_TRIAL_STATES = tuple(state.name for state in TrialState)


class StudyHandlers:
    def __init__(
        self,
        store: Store,
        storage: optuna.storages.BaseStorage,
        gateway_id: str,
        execution: ExecutionConfig,
        wake: Callable[[], None],
        run_checks: RunChecks | None = None,
        instrument_check: Callable[[str], bool] | None = None,
    ) -> None:
        self.store = store
        self.storage = storage
        self.gateway_id = gateway_id
        self.execution = execution
        #: Tells the scheduler a study was created or changed state.
        self.wake = wake
        self.run_checks = run_checks
        self.instrument_check = instrument_check

    # create

    async def studies_create(self, query: Query, params: dict[str, str], body: StudyBody) -> Relayed:
        now = time.time_ns()
        training, holdout = _refused(spans, body)
        revision_id, files = await revision_files(self.store, CREATE, body.strategy_id, body.revision_id)
        fixed = {name: str(value) for name, value in (body.parameters or {}).items()}
        base = Definition(
            strategy_id=body.strategy_id,
            revision_id=revision_id,
            instrument_id=body.instrument_id,
            resolution=body.resolution,
            channel=body.channel,
            search={},
            parameters=fixed,
            metric="",
            direction="MAXIMIZE",
            trials=1,
            parallel=1,
            sampler="TPE",
            seed=0,
            training=training,
            holdout=holdout,
            label=None,
        )
        request = await asyncio.to_thread(
            _refused,
            build_request,
            trial_body(base, {}, training, ""),
            revision_id,
            files,
            self.execution,
            now,
            self.instrument_check,
        )
        resolved = _refused(resolve, body, revision_id, request.plan.parameters, training, holdout)
        if self.run_checks is not None:
            for span in (training, holdout):
                if span is not None:
                    spec = request.spec
                    run = Run(
                        request.instruments,
                        spec.resolution,
                        spec.channel,
                        int(span.start),
                        int(span.end),
                        request.plan.quantity,
                    )
                    await self.run_checks.check(run, CREATE)
        record = await asyncio.to_thread(
            self.store.create_study,
            study_id(resolved, now, self.gateway_id),
            resolved.strategy_id,
            revision_id,
            resolved.encode(),
            now,
        )
        self.wake()
        return Relayed(201, _encode(study_document(record)))

    # reads

    async def studies_list(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        state = cast(StudyState | None, query.choice("state", STUDY_STATES))
        strategy_id = query.text("strategy_id")
        rows, cursor = await db_page(
            query,
            f"/v2/studies?{strategy_id}&{state}",
            lambda offset, limit: self.store.studies(offset, limit, strategy_id=strategy_id, state=state),
        )
        return page_document("svc.study_page", [study_document(row) for row in rows], cursor)

    async def studies_get(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        return study_document(await self._study(params["id"]))

    async def studies_trials(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        record = await self._study(params["id"])
        state = query.choice("state", _TRIAL_STATES)
        search = Definition.decode(record.definition).search

        def fetch(offset: int, limit: int) -> list[FrozenTrial]:
            trials = self._trials(record.study_id)
            if state is not None:
                trials = [t for t in trials if t.state.name == state]
            return trials[offset : offset + limit]

        rows, cursor = await db_page(query, f"/v2/studies/{record.study_id}/trials?{state}", fetch)
        return page_document(
            "svc.trial_page",
            [trial_document(record.study_id, search, t) for t in rows],
            cursor,
            study_id=record.study_id,
        )

    async def studies_trial(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        record = await self._study(params["id"])
        trial = await self._trial(record, params["trial"])
        return trial_document(record.study_id, Definition.decode(record.definition).search, trial)

    async def studies_best(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        record = await self._study(params["id"])
        definition = Definition.decode(record.definition)
        trial = await self._best(record)
        statistics = await self._statistics(trial_record(trial)["job_id"])
        return _answer(
            "svc.study_best",
            record,
            definition,
            trial=trial_document(record.study_id, definition.search, trial),
            statistics=statistics,
        )

    # actions

    async def studies_pause(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        return await self._move(params["id"], ("QUEUED", "RUNNING"), "PAUSED", "pause takes a QUEUED or RUNNING study")

    async def studies_resume(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        record = await self._study(params["id"])
        if record.state in ("QUEUED", "RUNNING"):
            return study_document(record)
        return await self._move(
            record.study_id,
            ("PAUSED",),
            "RUNNING",
            "resume takes a PAUSED study; a completed, failed or cancelled study does not run again "
            "(GET /v2/studies/{id}/retry runs the failed trials of a COMPLETED or FAILED one)",
        )

    async def studies_cancel(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        record = await self._study(params["id"])
        if record.state == "CANCELLED":
            raise HttpError("CONFLICT", f"study {record.study_id} is CANCELLED already")
        return await self._move(
            record.study_id,
            ("QUEUED", "RUNNING", "PAUSED"),
            "CANCELLED",
            "cancel takes a QUEUED, RUNNING or PAUSED study",
        )

    async def studies_retry(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        record = await self._study(params["id"])
        if record.state == "CANCELLED":
            raise HttpError("CONFLICT", f"study {record.study_id} is CANCELLED; a cancelled study does not run again")
        count = await asyncio.to_thread(self._retry, record.study_id)
        if not count:
            raise HttpError("CONFLICT", f"study {record.study_id} has no failed trial to retry")
        if record.state in ("COMPLETED", "FAILED"):
            return await self._move(record.study_id, ("COMPLETED", "FAILED"), "RUNNING", "retry")
        self.wake()
        return study_document(await self._study(record.study_id))

    def _retry(self, study_id: str) -> int:
        """Ask every failed trial not yet asked again once more, at its parameters (Optuna's
        retry callback: the copy records the trial it retries)."""
        study = optuna.load_study(study_name=study_id, storage=self.storage)
        trials = study.get_trials(deepcopy=False)
        again = retried(trials)
        failed = [t for t in trials if t.state == TrialState.FAIL and t.number not in again]
        callback = optuna.storages.RetryHeartbeatStaleTrialCallback()
        for trial in failed:
            callback(study, trial)
        return len(failed)

    async def studies_holdout(self, query: Query, params: dict[str, str]) -> dict[str, Any]:
        record = await self._study(params["id"])
        definition = Definition.decode(record.definition)
        if definition.holdout is None:
            raise HttpError(
                "CONFLICT", f"study {record.study_id} has no holdout window (give holdout when creating a study)"
            )
        trial = await self._best(record)
        values = exact_params(definition.search, trial.params)
        if record.holdout_trial != trial.number or record.holdout_job_id is None:
            job_id = await asyncio.to_thread(self._run_holdout, record, definition, trial.number, values)
        else:
            job_id = record.holdout_job_id
        return _answer(
            "svc.study_holdout",
            record,
            definition,
            trial=trial.number,
            params=[{"name": n, "value": v} for n, v in values.items()],
            training=await self._run(definition.training, trial_record(trial)["job_id"]),
            holdout=await self._run(definition.holdout, job_id),
        )

    def _run_holdout(self, record: StudyRecord, definition: Definition, number: int, values: dict[str, str]) -> str:
        files = self.store.revision_texts(definition.strategy_id, definition.revision_id)
        label = f"study {record.study_id[:12]} holdout of trial {number}"
        try:
            job = submit_run(
                self.store, definition, files, self.execution, self.gateway_id, values, _holdout(definition), label
            )
        except RequestRefused as refused:
            raise HttpError("CONFLICT", f"the holdout run cannot be made: {refused.text}") from None
        self.store.set_holdout(record.study_id, number, job.job_id, time.time_ns())
        return job.job_id

    async def _run(self, span: Span, job_id: str) -> dict[str, Any]:
        """One run of the holdout document: its window, job and, once COMPLETED, statistics."""
        job = await asyncio.to_thread(self.store.job, job_id)
        report = None
        statistics = None
        if job.state == "COMPLETED":
            report = msgspec.json.decode(
                (await asyncio.to_thread(self.store.outputs, job_id, OutputPart.REPORT, 0, 1))[0]
            )
            statistics = await self._statistics(job_id)
        return {
            "window": {"start": span.start, "end": span.end},
            "job_id": job_id,
            "state": job.state,
            "run_id": job.run_id,
            "result_hash": None if report is None else report["result_hash"],
            "statistics": statistics,
            "last_error": None if job.last_error is None else scrub(job.last_error),
        }

    async def studies_promote(self, query: Query, params: dict[str, str]) -> Relayed:
        record = await self._study(params["id"])
        definition = Definition.decode(record.definition)
        trial = await self._best(record)
        values = {**definition.parameters, **exact_params(definition.search, trial.params)}
        files = await asyncio.to_thread(self.store.revision_texts, definition.strategy_id, definition.revision_id)
        try:
            promoted = await asyncio.to_thread(with_defaults, files, values)
        except PromoteError as error:
            raise HttpError("CONFLICT", f"the best trial's values cannot be saved as defaults: {error}") from None
        shown = ", ".join(f"{n}={v}" for n, v in sorted(values.items()))
        message = f"promote study {record.study_id[:12]} trial {trial.number}: {shown}"
        return await asyncio.to_thread(
            save_files, self.store, definition.strategy_id, definition.revision_id, message, promoted
        )

    # lookups

    async def _study(self, study_id: str) -> StudyRecord:
        if not IDENTITY.fullmatch(study_id):
            raise HttpError("INVALID_PARAMETER", f"study id {study_id!r}: a study id is 64 lowercase hex digits")
        try:
            return await asyncio.to_thread(self.store.study, study_id)
        except NotFound:
            raise HttpError("NOT_FOUND", f"no study {study_id}; GET /v2/studies lists them") from None

    def _trials(self, study_id: str) -> list[FrozenTrial]:
        """The study's trials by number; none before its scheduler created it in Optuna."""
        try:
            return optuna.load_study(study_name=study_id, storage=self.storage).get_trials(deepcopy=False)
        except KeyError:
            return []

    async def _trial(self, record: StudyRecord, text: str) -> FrozenTrial:
        if not text.isdigit() or len(text) > 9:
            raise HttpError("INVALID_PARAMETER", f"trial {text!r}: a trial is its number (0, 1, ...)")
        trials = await asyncio.to_thread(self._trials, record.study_id)
        if int(text) >= len(trials):
            raise HttpError(
                "NOT_FOUND", f"study {record.study_id} has no trial {text} ({len(trials)} so far: 0..{len(trials) - 1})"
            )
        return trials[int(text)]

    async def _best(self, record: StudyRecord) -> FrozenTrial:
        if record.progress.best_trial is None:
            raise HttpError("CONFLICT", f"study {record.study_id} has no complete trial yet (it is {record.state})")
        return await self._trial(record, str(record.progress.best_trial))

    async def _statistics(self, job_id: str) -> Any:
        rows = await asyncio.to_thread(self.store.outputs, job_id, OutputPart.STATISTICS, 0, 1)
        return msgspec.json.decode(rows[0])

    async def _move(self, study_id: str, sources: tuple[str, ...], target: str, rule: str) -> dict[str, Any]:
        record = await self._study(study_id)
        try:
            moved = await asyncio.to_thread(
                self.store.move_study,
                record.study_id,
                sources,
                target,
                time.time_ns(),
            )
        except StudyStateRefused as refused:
            raise HttpError("CONFLICT", f"study {record.study_id} is {refused.state}; {rule}") from None
        self.wake()
        return study_document(moved)


def _answer(schema_id: str, record: StudyRecord, definition: Definition, **fields: Any) -> dict[str, Any]:
    """An own study document: its head, the study and its objective, then ``fields``."""
    return {
        "version": "spine.v2",
        "schema_id": schema_id,
        "schema_version": 1,
        "study_id": record.study_id,
        "objective": {"metric": definition.metric, "direction": definition.direction},
        **fields,
    }


def _holdout(definition: Definition) -> Span:
    assert definition.holdout is not None
    return definition.holdout


def _refused(step: Callable[..., Any], *args: Any) -> Any:
    """``step(*args)``, a refusal of the body answered as the route's 400."""
    try:
        return step(*args)
    except RequestRefused as refused:
        raise HttpError(refused.symbol, f"{CREATE}: {refused.text}") from None
    except DefinitionError as error:
        raise HttpError("INVALID_BODY", f"{CREATE}: {error}") from None
