"""The one typed request a backtest job carries from submit to run, and its codec.

A :class:`BacktestRequest` is resolved once, when it is submitted
(:func:`spine.jobs.submission.build_request`): the body as sealed, the run it resolved to
(revision, instrument, span, resolution, channel, every parameter's value), the execution
block the service fixes, the config_hash, and the strategy plan at those values (features,
rules, sizing, risk). The job stores it as canonical JSON text (:func:`encode`); the worker's
runner decodes it (:func:`decode_stored`) and runs it as it is, reading nothing else.

Identities: ``config_hash = identity("config_hash", {"run": spec, "execution": execution})``;
``job_id`` over the config_hash, the submission time and the submitter (:meth:`job_id`);
the run's ``run_id`` covers the sealed body (:mod:`spine.backtest.engine`).

Stored rows: ``{"body", "spec", "config_hash", "execution", "plan"}``. Rows written before
requests carried their plan hold the first four keys (a :class:`SealedRequest`); they are
read as they are, and a runner plans one from its revision (:func:`with_plan`). The plan is
part of the stored form: a field added to :class:`~spine.strategies.plan.StrategyPlan` takes
a default, so rows stored before it still decode.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import msgspec

from spine._core import canonical_json, identity
from spine.strategies.plan import StrategyPlan

__all__ = [
    "BacktestRequest",
    "ExecutionConfig",
    "ResolvedRun",
    "SealedBody",
    "SealedRequest",
    "body_document",
    "config_hash",
    "decode",
    "decode_stored",
    "encode",
    "with_plan",
]


class ExecutionConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The execution block the service fixes, less the currency (the instruments' quote
    currency, known once the run reads them): starting capital (exact decimal text), the fee
    and fill models by their report names, the fill model's seed."""

    capital: str
    fee_model: str = "MAKER_TAKER"
    fill_model: str = "FILL_MODEL"
    seed: int


class SealedBody(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """The ``POST /v2/backtests`` body as sealed: the keys given (null ones left out), times as
    nanosecond digits, parameter values as exact text, so spellings of one request seal alike."""

    strategy_id: str
    revision_id: str | None = None
    instrument_id: str | None = None
    start: str | None = None
    end: str | None = None
    resolution: str | None = None
    channel: Literal["EXTERNAL", "INTERNAL"] | None = None
    parameters: dict[str, str] | None = None
    label: str | None = None


class ResolvedRun(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The run a body resolved to (what the config_hash covers): the revision, one instrument
    (None: the revision's own), the span of bar closes (nanosecond digits, both inclusive), the
    resolution and channel, and every declared parameter's value as exact text."""

    strategy_id: str
    revision_id: str
    instrument_id: str | None
    start: str
    end: str
    resolution: str
    channel: Literal["EXTERNAL", "INTERNAL"]
    values: dict[str, str]


class SealedRequest(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What every stored request holds: the documents that show a job's request read these."""

    body: SealedBody
    spec: ResolvedRun
    config_hash: str
    execution: ExecutionConfig


class BacktestRequest(SealedRequest, frozen=True, forbid_unknown_fields=True):
    """A backtest, resolved: everything its run takes (see the module docs)."""

    #: The revision's plan at ``spec.values``.
    plan: StrategyPlan

    @property
    def instruments(self) -> list[str]:
        """The instruments the run takes, in run order."""
        return [self.spec.instrument_id] if self.spec.instrument_id is not None else list(self.plan.instruments)

    def job_id(self, submitted_ts: int, submitter_id: str) -> str:
        """The id of this request's job submitted at ``submitted_ts`` by ``submitter_id`` (a
        gateway's id)."""
        return identity(
            "job_id", {"config_hash": self.config_hash, "submitted_ts": str(submitted_ts), "gateway_id": submitter_id}
        )


def config_hash(spec: ResolvedRun, execution: ExecutionConfig) -> str:
    """The identity of a run and its execution block, whoever submits it."""
    return identity("config_hash", {"run": msgspec.to_builtins(spec), "execution": msgspec.to_builtins(execution)})


def body_document(request: SealedRequest) -> dict[str, Any]:
    """The sealed body as a JSON object, keys sorted (as stored)."""
    body: dict[str, Any] = msgspec.to_builtins(request.body, order="sorted")
    return body


def encode(request: BacktestRequest) -> str:
    """The request as the job stores it: canonical JSON text."""
    return canonical_json(msgspec.to_builtins(request)).decode()


_current = msgspec.json.Decoder(BacktestRequest)
_sealed = msgspec.json.Decoder(SealedRequest)


def decode(text: str | bytes) -> BacktestRequest:
    """A request as :func:`encode` wrote it.

    # Errors
    ``msgspec.ValidationError`` for a key it does not know, one missing or a value of another
    type; ``msgspec.DecodeError`` for text that is not JSON."""
    return _current.decode(text)


def decode_stored(text: str | bytes) -> BacktestRequest | SealedRequest:
    """A stored row's request: the current form, or a row written before requests carried
    their plan (a :class:`SealedRequest`).

    # Errors
    As :func:`decode`, with the current form's complaint when the text is neither form."""
    try:
        return _current.decode(text)
    except msgspec.ValidationError as error:
        try:
            return _sealed.decode(text)
        except msgspec.ValidationError:
            raise error from None


def with_plan(sealed: SealedRequest, files: Mapping[str, str]) -> BacktestRequest:
    """A request stored without its plan, planned from its revision's ``files`` at the sealed
    parameters (as the gateway planned it at submit).

    # Errors
    ``spine.strategies.errors.StrategyError`` when the revision no longer plans at them."""
    from spine.strategies.document import plan

    fields = msgspec.structs.asdict(sealed)
    return BacktestRequest(**fields, plan=plan(files, sealed.body.parameters or {}))
