"""POST bodies: one sealed msgspec Struct per body, decoded strictly, and described in the
OpenAPI document from the same Structs.

A body is checked in three steps, each with its own answer:

1. the JSON text, by the core's strict parser (the one canonical JSON uses): floats, duplicate
   keys, invalid UTF-8 and oversized integers are INVALID_BODY naming their JSON path, so an
   operator's value crosses exactly as typed or not at all;
2. the keys: anything but an object is INVALID_BODY, keys outside the Struct's fields are
   UNKNOWN_BODY_KEYS naming the route, every unknown key and the allowed keys;
3. the values, by msgspec against the Struct: INVALID_BODY naming the path.

A body that is a published document (``DocumentBody``: a screen definition) takes steps 1 and
2 against the document's own schema properties and is passed on as its bytes: its owner (the
Rust screen evaluator) enforces the rest of its grammar and names the path it refuses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, cached_property
from typing import Annotated, Any, Literal, TypeVar

import msgspec

from spine._core import canonicalize
from spine.errors import CanonicalJsonError
from spine.http.errors import HttpError

__all__ = [
    "BODIES",
    "MAX_BODY_BYTES",
    "BacktestBody",
    "DocumentBody",
    "InstrumentClass",
    "SearchBody",
    "SelectionBody",
    "StudyBody",
    "body_schemas",
    "decode_body",
    "decode_document",
]

#: Large enough for 1,000 ids of 128 characters, pretty-printed; past it a body is refused unread.
MAX_BODY_BYTES = 1 << 20
_ID = r"^[!-~]+\.[A-Z][A-Z0-9_]*\Z"
B = TypeVar("B", bound=msgspec.Struct)
#: The trading framework's instrument classes (``svc.instrument_ref``'s ``instrument_class``).
InstrumentClass = Literal[
    "SPOT",
    "SWAP",
    "FUTURE",
    "FUTURES_SPREAD",
    "FORWARD",
    "CFD",
    "BOND",
    "OPTION",
    "OPTION_SPREAD",
    "WARRANT",
    "SPORTS_BETTING",
    "BINARY_OPTION",
]


class SelectionBody(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """POST /v2/selection and /v2/selection/remove: ids to add to or remove from the manifest."""

    instrument_ids: Annotated[
        list[Annotated[str, msgspec.Meta(pattern=_ID, max_length=128)]], msgspec.Meta(min_length=1, max_length=1000)
    ]


class SearchBody(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """POST /v2/instruments/search: the query's fields; the node fills in the defaults."""

    text: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
    instrument_classes: Annotated[list[InstrumentClass], msgspec.Meta(min_length=1)] | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=1000)] = 100


#: Nanoseconds or an ISO-8601 UTC time (``spine.http.times``), read by the route.
_TIME = Annotated[str, msgspec.Meta(min_length=1, max_length=40)]
_NAME = Annotated[str, msgspec.Meta(pattern=r"^[a-z][a-z0-9_]{0,63}\Z")]
_VALUE = Annotated[str, msgspec.Meta(pattern=r"^-?(0|[1-9][0-9]*)(\.[0-9]+)?\Z", max_length=64)]
#: A JSON integer is exact too (a float never crosses: the strict parser refuses it).
_INTEGER = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]


class BacktestBody(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """POST /v2/backtests, sealed at these nine keys. The execution block (capital, currency,
    fee model, fill model, seed) is not among them: the service fixes it."""

    #: The strategy to run.
    strategy_id: _NAME
    #: The revision to run; null: the strategy's head when the job is submitted.
    revision_id: Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{64}\Z")] | None = None
    #: One instrument to run on instead of the revision's own (a single id, not a list).
    instrument_id: Annotated[str, msgspec.Meta(pattern=_ID, max_length=128)] | None = None
    #: The span of bar closes taken, both inclusive; null: from the first bar held / to the last.
    start: _TIME | None = None
    end: _TIME | None = None
    #: Instead of the revision's resolution and channel.
    resolution: Literal["1m", "5m", "15m", "30m", "1h", "4h", "1d"] | None = None
    channel: Literal["EXTERNAL", "INTERNAL"] | None = None
    #: Parameter values instead of the revision's defaults, as exact text, within their ranges.
    parameters: Annotated[dict[_NAME, _VALUE | _INTEGER], msgspec.Meta(max_length=64)] | None = None
    #: A note kept with the job.
    label: Annotated[str, msgspec.Meta(max_length=256)] | None = None


class Window(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """A span of bar closes, both ends inclusive: nanoseconds or ISO-8601 UTC times."""

    start: _TIME
    end: _TIME


class StudyObjective(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """A statistic of the trial's report (``svc.backtest_statistics``) and its direction."""

    metric: _NAME
    direction: Literal["MAXIMIZE", "MINIMIZE"] = "MAXIMIZE"


class StudySampler(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Optuna's sampler by name, and its seed."""

    name: Literal["TPE", "RANDOM"] = "TPE"
    seed: Annotated[int, msgspec.Meta(ge=0, le=2**32 - 1)] = 0


_EXACT = _VALUE | _INTEGER
#: One searched parameter: ``{"low", "high"[, "step"]}`` or ``{"choices": [...]}`` (checked
#: against the revision's declaration by ``spine.studies.space``).
_RANGE = Annotated[
    dict[Annotated[str, msgspec.Meta(max_length=16)], _EXACT | Annotated[list[_EXACT], msgspec.Meta(max_length=1000)]],
    msgspec.Meta(min_length=1, max_length=4),
]


class StudyBody(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """POST /v2/studies, sealed at these keys: many backtests of one revision, their parameters
    drawn from ``search`` by Optuna, scored by ``objective`` on the ``training`` window."""

    #: The strategy to study.
    strategy_id: _NAME
    #: The revision; null: the strategy's head when the study is created (then pinned).
    revision_id: Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{64}\Z")] | None = None
    #: One instrument to run on instead of the revision's own.
    instrument_id: Annotated[str, msgspec.Meta(pattern=_ID, max_length=128)] | None = None
    resolution: Literal["1m", "5m", "15m", "30m", "1h", "4h", "1d"] | None = None
    channel: Literal["EXTERNAL", "INTERNAL"] | None = None
    #: The declared parameters searched, each with its range or choices.
    search: Annotated[dict[_NAME, _RANGE], msgspec.Meta(min_length=1, max_length=64)]
    #: Values of parameters not searched, instead of the revision's defaults.
    parameters: Annotated[dict[_NAME, _EXACT], msgspec.Meta(max_length=64)] | None = None
    objective: StudyObjective
    #: How many trials to run.
    trials: Annotated[int, msgspec.Meta(ge=1, le=10_000)]
    #: How many trials may run at once (each one backtest job on the queue).
    parallel: Annotated[int, msgspec.Meta(ge=1, le=64)] = 1
    sampler: StudySampler = msgspec.field(default_factory=StudySampler)
    #: The window every trial runs on.
    training: Window
    #: A later window the best trial is checked on, never used to choose it.
    holdout: Window | None = None
    #: A note kept with the study.
    label: Annotated[str, msgspec.Meta(max_length=256)] | None = None


_QUANTITY = Annotated[str, msgspec.Meta(pattern=r"^(0|[1-9][0-9]*)(\.[0-9]+)?\Z", max_length=40)]


class OrderBody(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """POST /v2/orders: a paper order as the operator typed it (quantity and price exact text,
    never floats). ``paper`` and ``confirmed`` are the route's gates: both must be true."""

    instrument_id: Annotated[str, msgspec.Meta(pattern=_ID, max_length=128)]
    side: Literal["BUY", "SELL"]
    order_type: Literal["MARKET", "LIMIT"]
    quantity: _QUANTITY
    #: Required for LIMIT, null (or left out) for MARKET.
    price: _QUANTITY | None = None
    time_in_force: Literal["GTC", "IOC", "FOK"] = "GTC"
    paper: bool = False
    confirmed: bool = False


class CancelBody(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """POST /v2/orders/cancel: one open paper order, by the client order id its command gave."""

    instrument_id: Annotated[str, msgspec.Meta(pattern=_ID, max_length=128)]
    client_order_id: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
    paper: bool = False
    confirmed: bool = False


BODIES: tuple[type[msgspec.Struct], ...] = (SelectionBody, SearchBody, BacktestBody, StudyBody, OrderBody, CancelBody)


@dataclass(frozen=True)
class DocumentBody:
    """A POST body that is one published document, passed on as its strict-parsed bytes."""

    schema_id: str
    schema_version: int = 1

    @cached_property
    def keys(self) -> list[str]:
        from spine.schemas import all_schemas  # the schema set is read once, on first use

        return list(all_schemas()[(self.schema_id, self.schema_version)]["properties"])


def decode_body(route: str, raw: bytes, kind: type[B]) -> B:
    """``raw`` as a ``kind``, or the :class:`HttpError` of the first step it fails (module docs)."""
    _sealed_object(route, raw, _field_names(kind))
    try:
        return msgspec.json.decode(raw, type=kind)
    except msgspec.ValidationError as error:
        raise HttpError("INVALID_BODY", f"{route}: {error}") from None


@cache
def _field_names(kind: type[msgspec.Struct]) -> list[str]:
    """A body's keys, read once per kind: ``msgspec.structs.fields`` evaluates the annotations
    each time (a profile of 200 submits at once found it the loop's largest cost)."""
    return [field.encode_name for field in msgspec.structs.fields(kind)]


def decode_document(route: str, raw: bytes, kind: DocumentBody) -> bytes:
    """``raw``, once it is strict JSON and an object holding no key outside ``kind``'s."""
    _sealed_object(route, raw, kind.keys)
    return raw


def _sealed_object(route: str, raw: bytes, allowed: list[str]) -> None:
    try:
        canonicalize(raw)
    except CanonicalJsonError as error:
        raise HttpError("INVALID_BODY", f"{route}: {error}") from None
    try:
        keys = msgspec.json.decode(raw, type=dict[str, msgspec.Raw])
    except msgspec.ValidationError:
        raise HttpError("INVALID_BODY", f"{route}: the body must be a JSON object") from None
    unknown = sorted(set(keys).difference(allowed))
    if unknown:
        raise HttpError(
            "UNKNOWN_BODY_KEYS", f"{route}: unknown keys {', '.join(unknown)}; allowed keys: {', '.join(allowed)}"
        )


def body_schemas(ref_template: str) -> dict[str, Any]:
    """JSON Schemas of every body by Struct name (OpenAPI ``components.schemas``). Patterns are
    written with ECMA-262 ``$``: the Structs' ``\\Z`` exists only in Python's dialect."""
    _, components = msgspec.json.schema_components(BODIES, ref_template=ref_template)
    return {name: _ecma(schema) for name, schema in components.items()}


def _ecma(part: Any) -> Any:
    if isinstance(part, dict):
        return {k: re.sub(r"\\Z$", "$", v) if k == "pattern" else _ecma(v) for k, v in part.items()}
    if isinstance(part, list):
        return [_ecma(v) for v in part]
    return part
