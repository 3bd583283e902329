"""The studies' documents: ``svc.optuna_study`` from a study's row, ``svc.optuna_trial`` from
an Optuna trial and Spine's record of it, and the pages of both."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from optuna.trial import FrozenTrial, TrialState

from spine.jobs.study_rows import StudyRecord
from spine.studies.definition import Definition
from spine.studies.space import DecimalRange
from spine.studies.study_run import trial_record

__all__ = ["exact_params", "study_document", "trial_document"]


def _head(schema_id: str) -> dict[str, Any]:
    return {"version": "spine.v2", "schema_id": schema_id, "schema_version": 1}


def study_document(record: StudyRecord) -> dict[str, Any]:
    definition = Definition.decode(record.definition)
    progress = record.progress
    return {
        **_head("svc.optuna_study"),
        "study_id": record.study_id,
        "strategy_id": record.strategy_id,
        "revision_id": record.revision_id,
        "state": record.state,
        "objective": {"metric": definition.metric, "direction": definition.direction},
        "trials": progress.trials,
        "best_trial": progress.best_trial,
        "best_value": progress.best_value,
        "progress": {
            "target": definition.trials,
            "complete": progress.complete,
            "running": progress.running,
            "waiting": progress.waiting,
            "failed": progress.failed,
        },
        "definition": definition.document(),
        "last_error": record.last_error,
        "created_ts": str(record.created_ts),
        "updated_ts": str(record.updated_ts),
    }


def exact_params(search: dict[str, dict[str, Any]], params: dict[str, Any]) -> dict[str, str]:
    """A trial's parameters as exact text: Optuna's integers as they are, choices as their
    text, a decimal range's float on its grid (``spine.studies.space``)."""
    out: dict[str, str] = {}
    for name in sorted(params):
        value, grid = params[name], search.get(name, {})
        if isinstance(value, int) and not isinstance(value, bool):
            out[name] = str(value)
        elif "choices" in grid or isinstance(value, str):
            out[name] = str(value)
        else:
            low, high, step = (Decimal(grid[k]) for k in ("low", "high", "step"))
            out[name] = DecimalRange(name, low, high, step).on_grid(float(value))
    return out


def trial_document(study_id: str, search: dict[str, dict[str, Any]], trial: FrozenTrial) -> dict[str, Any]:
    record = trial_record(trial)
    complete = trial.state == TrialState.COMPLETE
    return {
        **_head("svc.optuna_trial"),
        "study_id": study_id,
        "trial": trial.number,
        "state": trial.state.name,
        "params": [{"name": n, "value": v} for n, v in exact_params(search, trial.params).items()],
        "value": record.get("value") if complete else None,
        "run_id": record.get("run_id"),
        "result_hash": record.get("result_hash"),
        "job_id": record.get("job_id"),
        "reason": record.get("reason"),
        "started_ts": record.get("started_ts"),
        "finished_ts": record.get("finished_ts"),
    }
