"""What a backtest run takes and gives back: the run specification a job carries
(:class:`RunSpec`), the execution block the service fixes (:class:`Execution`), the outputs
(:class:`RunOutputs`, every document as canonical JSON bytes) and the run's errors.

The execution block is configuration, never part of a request: a run reads it back in its
report and in ``svc.backtest_job_detail``.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from spine.errors import SpineError

__all__ = ["BacktestError", "Execution", "RunCancelled", "RunFailed", "RunOutputs", "RunSpec"]


class Execution(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The execution block: starting capital (exact decimal text) in ``currency`` (the
    instruments' quote currency; a run whose instruments quote another is refused), the fee
    and fill models by the names the report gives them (``^[A-Z][A-Z0-9_]*$``) and the fill
    model's random seed."""

    capital: str = "100000"
    currency: str = "USDT"
    fee_model: str = "MAKER_TAKER"
    fill_model: str = "FILL_MODEL"
    seed: int = 42

    def document(self) -> dict[str, Any]:
        """The ``execution`` object of the report and the job detail."""
        return msgspec.structs.asdict(self)


class RunSpec(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One job's run: whose strategy and revision, on which instrument (None: the revision's
    own), over which span (``start``/``end``: nanoseconds, inclusive bounds on the 1-minute
    bars' close; None: unbounded), at which resolution and channel, with which parameter
    values. ``request`` is the sealed request as submitted (it enters ``run_id``);
    ``config_hash`` is the job's (None: ``identity("config_hash", request)``)."""

    job_id: str
    strategy_id: str
    revision_id: str
    instrument_id: str | None
    start: int | None
    end: int | None
    resolution: str
    channel: Literal["EXTERNAL", "INTERNAL"]
    values: dict[str, str]
    request: dict[str, Any] = msgspec.field(default_factory=dict)
    config_hash: str | None = None
    execution: Execution = Execution()


class RunOutputs(msgspec.Struct, frozen=True):
    """A finished run. ``report`` is its ``svc.backtest_run_result``; every other part is a
    list of canonical JSON documents in time order (``statistics``: one document;
    ``equity``: a point per bar close, ``equity_daily``: the last point of each UTC day;
    ``engine_status``: the run's ``svc.engine_status`` documents in lifecycle order;
    ``skipped``: the withheld spans, ``{instrument_id, resolution, start, end, reason}``,
    also listed under ``skipped`` in the statistics document)."""

    run_id: str
    result_hash: str
    report: bytes
    statistics: bytes
    equity: list[bytes]
    equity_daily: list[bytes]
    orders: list[bytes]
    fills: list[bytes]
    positions: list[bytes]
    signals: list[bytes]
    markers: list[bytes]
    retirements: list[bytes]
    engine_status: list[bytes]
    skipped: list[bytes]


class BacktestError(SpineError, ValueError):
    """A run refused before it starts: no catalog holds an instrument's bars, no bars in the
    span, instruments quoting different currencies, an unknown resolution."""

    symbol = "BACKTEST_REFUSED"


class RunFailed(SpineError):
    """A run that started and did not complete; ``engine_status`` holds its status documents,
    the last one FAILED."""

    symbol = "BACKTEST_FAILED"

    def __init__(self, message: str, engine_status: list[bytes]) -> None:
        super().__init__(message)
        self.engine_status = engine_status


class RunCancelled(RunFailed):
    """A run stopped by its cancel flag (its engine status ends FAILED, ``last_error``
    ``CANCELLED: ...``)."""

    symbol = "CANCELLED"
