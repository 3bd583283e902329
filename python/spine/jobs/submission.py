"""From a submit body and a revision to a queued job: the one way a backtest is asked for.

:func:`check_body` refuses what a body gets wrong on its own (span, instrument id), before
any lookup; :func:`build_request` resolves the body against a revision into a
:class:`~spine.jobs.request.BacktestRequest`; :func:`submit_request` queues it. The gateway's
``POST /v2/backtests`` takes these three steps, and so will a parameter study for each trial.
Refusals are :class:`RequestRefused`, the caller's route name left out of their text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

from spine.errors import SpineError
from spine.http.bodies import BacktestBody
from spine.http.times import TIME_WORDS, time_nanos
from spine.jobs.records import Job
from spine.jobs.request import BacktestRequest, ExecutionConfig, ResolvedRun, SealedBody, config_hash, encode
from spine.strategies import document
from spine.strategies.errors import ParameterOverrideError, StrategyDocumentError
from spine.strategies.plan import StrategyPlan
from spine.wire.instruments import catalog_id_problem

__all__ = ["JobQueue", "RequestRefused", "build_request", "check_body", "span", "submit_request"]

_I63 = 2**63 - 1


class RequestRefused(SpineError, ValueError):
    """A body or revision that cannot make a run; ``symbol`` is the wire code (``INVALID_BODY``,
    ``INVALID_INSTRUMENT_ID``), ``text`` the reason."""

    symbol = "INVALID_BODY"

    def __init__(self, text: str, symbol: str | None = None) -> None:
        super().__init__(f"{symbol or self.symbol}: {text}", symbol)
        self.text = text


class JobQueue(Protocol):
    """What submitting takes from the job store (``spine.jobs.Store``)."""

    def submit(
        self,
        job_id: str,
        strategy_id: str,
        revision_id: str,
        request: str,
        instrument_id: str | None,
        start: int,
        end: int,
        now: int,
    ) -> Job: ...


def span(body: BacktestBody, now: int) -> tuple[int, int]:
    """The span of bar closes a run takes, both ends inclusive: from the first bar held (0)
    to ``now`` when the body leaves them out; each given as nanoseconds or an ISO-8601 UTC
    time (``spine.http.times``).

    # Errors
    :class:`RequestRefused` for a time it cannot read, one past 2^63-1, or an end before the start."""
    given: dict[str, int] = {}
    for name, text in (("start", body.start), ("end", body.end)):
        if text is None:
            continue
        value = time_nanos(text)
        if value is None:
            raise RequestRefused(f"{name} {text!r} is not a time; give {TIME_WORDS}")
        if value > _I63:
            raise RequestRefused(f"{name} {text} is past 2^63-1 ns (year 2262)")
        given[name] = value
    start, end = given.get("start", 0), given.get("end", now)
    if end < start:
        raise RequestRefused(f"end {end} precedes start {start}; give start <= end (both inclusive)")
    return start, end


def check_body(body: BacktestBody, now: int) -> tuple[int, int]:
    """Refuse what the body gets wrong on its own (its span, its instrument id); its span.

    # Errors
    :class:`RequestRefused`."""
    start_end = span(body, now)
    if body.instrument_id is not None and (problem := catalog_id_problem(body.instrument_id)) is not None:
        raise RequestRefused(f"instrument_id: {problem}", "INVALID_INSTRUMENT_ID")
    return start_end


def build_request(
    body: BacktestBody,
    revision_id: str,
    files: Mapping[str, str],
    execution: ExecutionConfig,
    now: int,
    known_instrument: Callable[[str], bool] | None = None,
) -> BacktestRequest:
    """The request ``body`` makes of the revision ``revision_id`` (its ``files``) at ``now``:
    the revision validated (instruments checked by ``known_instrument`` when given), planned at
    the body's parameters, the run and its config_hash resolved.

    # Errors
    :class:`RequestRefused` for a body :func:`check_body` refuses, a revision whose validation
    has errors, or parameter values it refuses."""
    start, end = check_body(body, now)
    values = None if body.parameters is None else {name: str(value) for name, value in body.parameters.items()}
    plan = _plan(body.strategy_id, revision_id, files, values, known_instrument)
    spec = ResolvedRun(
        strategy_id=body.strategy_id,
        revision_id=revision_id,
        instrument_id=body.instrument_id,
        start=str(start),
        end=str(end),
        resolution=body.resolution or plan.resolution,
        channel=body.channel or plan.channel,
        values=plan.values,
    )
    # Times as nanoseconds and parameters as exact text: one request however it was spelt.
    sealed = SealedBody(
        strategy_id=body.strategy_id,
        revision_id=body.revision_id,
        instrument_id=body.instrument_id,
        start=None if body.start is None else str(start),
        end=None if body.end is None else str(end),
        resolution=body.resolution,
        channel=body.channel,
        parameters=values,
        label=body.label,
    )
    return BacktestRequest(
        body=sealed, spec=spec, config_hash=config_hash(spec, execution), execution=execution, plan=plan
    )


def _plan(
    strategy_id: str,
    revision_id: str,
    files: Mapping[str, str],
    values: dict[str, str] | None,
    known_instrument: Callable[[str], bool] | None,
) -> StrategyPlan:
    cannot = f"revision {revision_id} cannot run (GET /v2/strategies/{strategy_id}/validate names every problem)"
    errors = [d for d in document.validate(files, known_instrument) if d.severity == "ERROR"]
    if errors:
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise RequestRefused(f"{cannot}: {errors[0].describe()}{more}")
    try:
        return document.plan(files, values or {})
    except ParameterOverrideError as error:
        raise RequestRefused(f"parameters: {error}") from None
    except StrategyDocumentError as error:
        raise RequestRefused(f"{cannot}: {error}") from None


def submit_request(queue: JobQueue, request: BacktestRequest, submitter_id: str, now: int) -> Job:
    """Queue ``request`` as a job submitted at ``now`` by ``submitter_id``: its one encoding.

    # Errors
    As ``Store.submit``: ``NotFound`` for a revision the strategy does not hold, ``JobExists``."""
    spec = request.spec
    return queue.submit(
        job_id=request.job_id(now, submitter_id),
        strategy_id=spec.strategy_id,
        revision_id=spec.revision_id,
        request=encode(request),
        instrument_id=spec.instrument_id,
        start=int(spec.start),
        end=int(spec.end),
        now=now,
    )
