"""A study as accepted: the ``POST /v2/studies`` body checked against its revision and
resolved into a :class:`Definition` (times as nanosecond digits, values as exact text, the
search space as its grid), stored with the study and read back by its scheduler.

Each trial is a backtest body made from it (:func:`trial_body`): the study's revision,
instrument, resolution and channel, its fixed parameters and the trial's, on the training
window (the holdout window for the holdout run). It then takes the same path as any
``POST /v2/backtests`` (``spine.jobs.submission``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import msgspec

from spine._core import canonical_json, identity
from spine.http.bodies import BacktestBody, StudyBody, Window
from spine.http.times import TIME_WORDS, time_nanos
from spine.strategies.plan import ParameterDecl
from spine.studies.objective import Objective, ObjectiveError, Windows
from spine.studies.space import SearchSpace, SpaceError, describe, parse_space

__all__ = ["Definition", "DefinitionError", "Span", "resolve", "spans", "study_id", "trial_body"]

_I63 = 2**63 - 1


class DefinitionError(ValueError):
    """A study body its revision cannot take: the text names the key, the value and what is
    allowed."""


class Span(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Bar closes, both inclusive, as nanosecond digits."""

    start: str
    end: str


class Definition(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Everything a study runs, resolved (see the module docs)."""

    strategy_id: str
    revision_id: str
    instrument_id: str | None
    resolution: str | None
    channel: Literal["EXTERNAL", "INTERNAL"] | None
    #: The searched parameters' grids, as :func:`spine.studies.space.describe` states them.
    search: dict[str, dict[str, Any]]
    #: Values of parameters not searched (exact text), instead of the revision's defaults.
    parameters: dict[str, str]
    metric: str
    direction: Literal["MAXIMIZE", "MINIMIZE"]
    trials: int
    parallel: int
    sampler: Literal["TPE", "RANDOM"]
    seed: int
    training: Span
    holdout: Span | None
    label: str | None

    @property
    def objective(self) -> Objective:
        return Objective(self.metric, self.direction)

    def space(self, declared: Sequence[ParameterDecl]) -> SearchSpace:
        return parse_space(self.search, declared)

    def encode(self) -> str:
        return canonical_json(msgspec.to_builtins(self)).decode()

    @classmethod
    def decode(cls, text: str) -> Definition:
        return msgspec.json.decode(text, type=cls)

    def document(self) -> dict[str, Any]:
        """The definition as the study document shows it."""
        out: dict[str, Any] = msgspec.to_builtins(self, order="sorted")
        return out


def spans(body: StudyBody) -> tuple[Span, Span | None]:
    """The body's training and holdout windows as nanoseconds.

    # Errors
    :class:`DefinitionError` for a time it cannot read or one past 2^63-1, an end before its
    start, or a holdout that does not follow the training window."""
    training = _span("training", body.training)
    holdout = None if body.holdout is None else _span("holdout", body.holdout)
    try:
        Windows(
            (int(training.start), int(training.end)),
            None if holdout is None else (int(holdout.start), int(holdout.end)),
        )
    except ObjectiveError as error:
        raise DefinitionError(str(error)) from None
    return training, holdout


def resolve(
    body: StudyBody, revision_id: str, declared: Sequence[ParameterDecl], training: Span, holdout: Span | None
) -> Definition:
    """``body`` resolved against the revision ``revision_id`` whose parameters are ``declared``,
    over its windows (:func:`spans`).

    # Errors
    :class:`DefinitionError` (see the class)."""
    try:
        space = parse_space(body.search, declared)
        objective = Objective(body.objective.metric, body.objective.direction)
    except (SpaceError, ObjectiveError) as error:
        raise DefinitionError(str(error)) from None
    fixed = {name: str(value) for name, value in (body.parameters or {}).items()}
    both = sorted(set(fixed) & set(space.names))
    if both:
        raise DefinitionError(
            f"parameters.{both[0]}: searched too; a parameter is either searched (search) or fixed (parameters)"
        )
    return Definition(
        strategy_id=body.strategy_id,
        revision_id=revision_id,
        instrument_id=body.instrument_id,
        resolution=body.resolution,
        channel=body.channel,
        search=describe(space),
        parameters=fixed,
        metric=objective.metric,
        direction=objective.direction,
        trials=body.trials,
        parallel=body.parallel,
        sampler=body.sampler.name,
        seed=body.sampler.seed,
        training=training,
        holdout=holdout,
        label=body.label,
    )


def _span(name: str, window: Window) -> Span:
    ends = []
    for end, text in (("start", window.start), ("end", window.end)):
        value = time_nanos(text)
        if value is None:
            raise DefinitionError(f"{name}.{end} {text!r} is not a time; give {TIME_WORDS}")
        if value > _I63:
            raise DefinitionError(f"{name}.{end} {text} is past 2^63-1 ns (year 2262)")
        ends.append(value)
    return Span(str(ends[0]), str(ends[1]))


def study_id(definition: Definition, created_ts: int, gateway_id: str) -> str:
    """A study's id: its definition, when and where it was created."""
    return identity(
        "study_id",
        {"definition": msgspec.to_builtins(definition), "created_ts": str(created_ts), "gateway_id": gateway_id},
    )


def trial_body(definition: Definition, values: dict[str, str], span: Span, label: str) -> BacktestBody:
    """The backtest body of one run of the study at the searched ``values`` over ``span``."""
    return BacktestBody(
        strategy_id=definition.strategy_id,
        revision_id=definition.revision_id,
        instrument_id=definition.instrument_id,
        start=span.start,
        end=span.end,
        resolution=definition.resolution,  # type: ignore[arg-type]
        channel=definition.channel,
        parameters={**definition.parameters, **values},
        label=label,
    )
