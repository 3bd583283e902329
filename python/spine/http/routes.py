"""The route table: the single source of the router, the capability registry and the OpenAPI
document. Each row is one operation: its stable dotted id, effect (by effect, not verb),
method and path, the schemas it serves, the query parameters and POST body it takes, and which
processes serve it. Every process's app routes the whole table: an operation another process
serves answers NOT_SUPPORTED_ON_THIS_NODE there, a deferred one CAPABILITY_DEFERRED
everywhere (``serving``). A served COMMAND is operator-only: the app refuses it unless the
deployment mode is private-operator.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import msgspec

from spine.http.bodies import (
    BacktestBody,
    CancelBody,
    DocumentBody,
    OrderBody,
    SearchBody,
    SelectionBody,
    StudyBody,
)
from spine.wire.outputs import SERVED_PARTS

__all__ = [
    "BAR_PAGE_DEFAULT",
    "BAR_PAGE_MAX",
    "EVERY",
    "GATEWAY",
    "NODE",
    "OUTPUT_DOCUMENTS",
    "PAPER",
    "OPERATIONS",
    "SCREENER",
    "V1_FIXTURES",
    "Operation",
    "Process",
    "Serving",
    "Stream",
    "operation",
    "relayed",
    "serving",
]

Effect = Literal["QUERY", "COMMAND", "STREAM"]
#: ``handler``: served here; ``deferred``: 501 CAPABILITY_DEFERRED (not yet, on this node);
#: ``elsewhere``: 404 NOT_SUPPORTED_ON_THIS_NODE (another process serves it, never this one).
Serving = Literal["handler", "deferred", "elsewhere"]
#: What a STREAM operation streams: the name its process's app serves it by.
Stream = Literal["bars", "quotes", "trades", "screener", "backtests", "execution", "v1"]
#: The processes that serve routes of their own. The gateway also relays every route a node or
#: the screener serves (see :func:`serving`). A paper node is a venue node with a sandbox
#: execution client: it serves what a node serves and the execution reads.
Process = Literal["node", "screener", "gateway", "paper"]
NODE: tuple[Process, ...] = ("node",)
PAPER: tuple[Process, ...] = ("paper",)
SCREENER: tuple[Process, ...] = ("screener",)
GATEWAY: tuple[Process, ...] = ("gateway",)
#: A node answers for itself (no runs: empty pages, its own engine status); the gateway for
#: the backtest runs in its database.
RUNS: tuple[Process, ...] = ("node", "gateway")
#: Health, the registry, OpenAPI and the schema set: every process answers them itself.
EVERY: tuple[Process, ...] = ("node", "screener", "gateway")

PAGE = ("cursor", "limit")
#: An execution report's list: of one instrument or all, paged.
EXECUTION = ("instrument_id", "cursor", "limit")
BARS = ("instrument_id", "bar_type", "start", "end", "after_sequence", "limit")
SELECTION = ("svc.selection_page", "svc.selection_row")
#: A bar page's ``limit``: its default and its maximum, above a list's (``/v2/bars``, v1 ``/bars``).
BAR_PAGE_DEFAULT, BAR_PAGE_MAX = 500, 5_000
#: What a finished backtest's outputs route serves, by part (``/v2/backtests/{id}/outputs/{part}``).
OUTPUT_DOCUMENTS = tuple(dict.fromkeys(part.schema_id for part in SERVED_PARTS))  # equity parts share one
#: The v1 documents with a fixture route: those a client cannot pin or provoke on demand on a
#: live node (docs/contract.md, "v1 routes").
V1_FIXTURES = ("bars", "catalog", "engine_status", "readiness", "records", "stream_event", "resync")


@dataclass(frozen=True)
class Operation:
    id: str
    method: str
    path: str
    effect: Effect = "QUERY"
    schema_ids: tuple[str, ...] = ()
    params: tuple[str, ...] = ()
    #: The query parameters the route cannot do without (the rest are optional).
    required: tuple[str, ...] = ()
    #: Whether the route answers 503 NOT_READY until the node has discovered its instruments.
    awaits_discovery: bool = False
    #: The processes whose handlers answer it (none yet: a process still to come serves it).
    served_by: tuple[Process, ...] = NODE
    #: Defined but not yet served by any process (501 CAPABILITY_DEFERRED).
    deferred: bool = False
    wire_version: Literal["v1", "v2"] = "v2"
    providers: tuple[str, ...] = field(default=())
    requires_paper: bool = False
    requires_confirmation: bool = False
    #: The 200 document when it is not ``schema_ids[0]`` (v1 routes answer their own ``v1.*``).
    response: str | None = None
    #: The 200 document of a process that answers with another one than the others.
    response_by: tuple[tuple[Process, str], ...] = ()
    #: The POST body the handler takes (decoded by the app), if any: a sealed Struct, or a
    #: published document passed on as its bytes.
    body: type[msgspec.Struct] | DocumentBody | None = None
    #: The status of a successful answer (201 a revision saved, 202 a job queued).
    status: int = 200
    #: The document a 409 answers instead of the error envelope.
    conflict: str | None = None
    #: A v1 fixture route's document: the committed example ``spine/_fixtures/<id>.json`` it
    #: answers, as its canonical bytes (see :mod:`spine.http.fixtures`).
    fixture: str | None = None
    #: What a STREAM operation streams (every stream names one; nothing else does).
    stream: Stream | None = None

    def __post_init__(self) -> None:
        if (self.effect == "STREAM") != (self.stream is not None):
            raise ValueError(f"{self.id}: a STREAM operation names its stream, and only a STREAM operation does")

    @property
    def document(self) -> str | None:
        """The id of the document a 200 answer carries (v1 routes: their own ``v1.*``)."""
        return self.response or (self.schema_ids[0] if self.schema_ids else None)

    def document_of(self, process: Process) -> str | None:
        """The id of the document ``process`` answers with."""
        return dict(self.response_by).get(process, self.document)

    @property
    def handler(self) -> str:
        return self.id.removeprefix("spine.").replace(".", "_")

    @property
    def tool(self) -> str | None:
        """The one tool that fronts the operation (spine tools, spine client, spine.client):
        every v2 operation some process serves has its own, named as its handler; v1 routes
        and deferred operations have none."""
        return None if self.deferred or self.wire_version != "v2" else self.handler


def operation(id: str) -> Operation:
    """The row of the operation ``id`` (KeyError for an id the table lacks)."""
    return _BY_ID[id]


def serving(op: Operation, process: Process) -> Serving:
    """How ``process`` answers ``op``: the gateway answers what it serves itself and relays
    what a node or the screener serves; a paper node answers what a node does and its own.
    What only a paper node serves is deferred on the other processes (a market-data node
    registers no execution client: per node, not build-wide); the gateway relays it to a
    paper node."""
    if op.deferred:
        return "deferred"
    if process in op.served_by or relayed(op, process) or (process == "paper" and "node" in op.served_by):
        return "handler"
    return "deferred" if op.served_by == PAPER else "elsewhere"


def relayed(op: Operation, process: Process) -> bool:
    """Whether ``process`` answers ``op`` by relaying it to the process that serves it."""
    upstream = bool({"node", "screener", "paper"} & set(op.served_by))
    return process == "gateway" and process not in op.served_by and upstream and not op.deferred


def _paper(id: str, path: str, schemas: tuple[str, ...], params: tuple[str, ...] = ()) -> Operation:
    """An execution read a paper node serves."""
    return Operation(id, "GET", path, schema_ids=schemas, params=params, served_by=PAPER)


def _deferred(id: str, method: str, path: str, effect: Effect = "QUERY", stream: Stream | None = None) -> Operation:
    return Operation(id, method, path, effect, served_by=(), deferred=True, stream=stream)


def _v1(
    name: str,
    path: str,
    schemas: tuple[str, ...] = (),
    params: tuple[str, ...] = (),
    document: str | None = None,
    served_by: tuple[Process, ...] = NODE,
) -> Operation:
    """A v1 read route; it answers ``v1.<document>`` (default: the route's own name)."""
    return Operation(
        f"spine.v1.{name}",
        "GET",
        path,
        schema_ids=schemas,
        params=params,
        wire_version="v1",
        response="v1." + (document or name.removesuffix(".get")),
        served_by=served_by,
    )


def _fixture(name: str) -> Operation:
    """A v1 fixture route: ``/fixtures/<name>`` answers the committed example ``v1.<name>``,
    the same bytes on every process and every run; never live data."""
    document = "v1." + name
    return Operation(
        f"spine.v1.fixtures.{name}",
        "GET",
        "/fixtures/" + name.replace("_", "-"),
        wire_version="v1",
        response=document,
        served_by=EVERY,
        fixture=document,
    )


def _gateway(
    id: str,
    method: str,
    path: str,
    effect: Effect = "QUERY",
    schemas: tuple[str, ...] = (),
    params: tuple[str, ...] = (),
    body: type[msgspec.Struct] | DocumentBody | None = None,
    stream: Stream | None = None,
) -> Operation:
    return Operation(id, method, path, effect, schemas, params=params, body=body, served_by=GATEWAY, stream=stream)


def _screener(id: str, method: str, path: str, effect: Effect = "QUERY", schemas: tuple[str, ...] = ()) -> Operation:
    return Operation(id, method, path, effect, schemas, served_by=SCREENER)


OPERATIONS: tuple[Operation, ...] = (
    # health, status, registry
    Operation(
        "spine.health.get",
        "GET",
        "/v2/health",
        schema_ids=("svc.health", "svc.engine_status"),
        served_by=EVERY,
    ),
    Operation(
        "spine.status.get",
        "GET",
        "/v2/status",
        schema_ids=("svc.node_status", "svc.gateway_status"),
        served_by=("node", "gateway"),
        response_by=(("gateway", "svc.gateway_status"),),
    ),
    Operation(
        "spine.registry.get",
        "GET",
        "/v2/registry",
        schema_ids=("svc.capability_registry",),
        served_by=EVERY,
    ),
    Operation("spine.engine_pin.get", "GET", "/v2/engine-pin", schema_ids=("svc.integration_capability",)),
    Operation("spine.connection.get", "GET", "/v2/connection", schema_ids=("svc.connection_state",)),
    Operation("spine.openapi.get", "GET", "/v2/openapi.json", served_by=EVERY),
    Operation(
        "spine.schemas.list", "GET", "/v2/schemas", schema_ids=("svc.schema_index",), params=PAGE, served_by=EVERY
    ),
    Operation("spine.schemas.get", "GET", "/v2/schemas/{file}", served_by=EVERY),
    # market data
    Operation(
        "spine.instruments.list",
        "GET",
        "/v2/instruments",
        schema_ids=("svc.instrument_page", "svc.instrument_ref"),
        params=PAGE,
    ),
    Operation(
        "spine.instruments.search",
        "POST",
        "/v2/instruments/search",
        schema_ids=("svc.search_result", "svc.search_query", "svc.instrument_ref"),
        body=SearchBody,
    ),
    Operation(
        "spine.instruments.search_result",
        "GET",
        "/v2/instruments/search/{id}",
        schema_ids=("svc.search_result",),
        params=PAGE,
    ),
    Operation("spine.resolutions.list", "GET", "/v2/resolutions", schema_ids=("svc.resolutions",), params=PAGE),
    Operation(
        "spine.bars.list",
        "GET",
        "/v2/bars",
        schema_ids=("svc.bar_envelope", "svc.series_coverage"),
        params=(*BARS, "cursor"),
    ),
    Operation(
        "spine.facts.list",
        "GET",
        "/v2/facts",
        schema_ids=("svc.facts_page", "svc.projection_frame"),
        params=("kind", *PAGE),
        required=("kind",),
        awaits_discovery=True,
    ),
    Operation(
        "spine.data.list",
        "GET",
        "/v2/data/{kind}",
        schema_ids=("svc.facts_page", "svc.projection_frame"),
        params=PAGE,
        awaits_discovery=True,
    ),
    Operation("spine.hydration.list", "GET", "/v2/hydration", schema_ids=("svc.hydration_state",), params=PAGE),
    Operation("spine.hydration.get", "GET", "/v2/hydration/{id}", schema_ids=("svc.hydration_state",)),
    Operation("spine.coverage.list", "GET", "/v2/coverage", schema_ids=("svc.coverage_ledger",), params=PAGE),
    Operation(
        "spine.coverage.failures", "GET", "/v2/coverage/failures", schema_ids=("svc.coverage_ledger",), params=PAGE
    ),
    Operation("spine.coverage.quiet", "GET", "/v2/coverage/quiet", schema_ids=("svc.coverage_ledger",), params=PAGE),
    Operation("spine.coverage.get", "GET", "/v2/coverage/{id}", schema_ids=("svc.coverage_ledger",)),
    # the ingestion roster: the manifest, changed by the operator
    Operation("spine.selection.get", "GET", "/v2/selection", schema_ids=SELECTION, params=PAGE),
    Operation("spine.selection.set", "POST", "/v2/selection", "COMMAND", SELECTION, body=SelectionBody),
    Operation("spine.selection.remove", "POST", "/v2/selection/remove", "COMMAND", SELECTION, body=SelectionBody),
    # streams
    Operation(
        "spine.stream.bars",
        "GET",
        "/v2/stream/bars",
        "STREAM",
        ("svc.bar_envelope", "svc.stream_heartbeat"),
        params=("instrument_id", "resolution", "channel"),
        stream="bars",
    ),
    Operation(
        "spine.stream.quotes",
        "GET",
        "/v2/stream/quotes",
        "STREAM",
        ("svc.quote_tick", "svc.stream_heartbeat"),
        params=("instrument_id",),
        stream="quotes",
    ),
    Operation(
        "spine.stream.trades",
        "GET",
        "/v2/stream/trades",
        "STREAM",
        ("svc.trade_tick", "svc.stream_heartbeat"),
        params=("instrument_id",),
        stream="trades",
    ),
    # execution reads: a paper node's (deferred on a market-data node) and the sandbox
    _paper("spine.account.get", "/v2/account", ("svc.account_state_summary",)),
    _paper("spine.accounts.list", "/v2/accounts", ("svc.account_page", "svc.account_state_summary"), PAGE),
    _paper("spine.fills.list", "/v2/fills", ("svc.execution_report_page", "svc.fill_summary"), EXECUTION),
    _paper("spine.orders.list", "/v2/orders", ("svc.execution_report_page", "svc.order_summary"), EXECUTION),
    _deferred("spine.portfolio.get", "GET", "/v2/portfolio"),
    _paper("spine.positions.list", "/v2/positions", ("svc.execution_report_page", "svc.position_summary"), EXECUTION),
    _deferred("spine.execution.stream", "GET", "/v2/stream/execution", "STREAM", "execution"),
    _deferred("spine.sandbox.start", "POST", "/v2/sandbox/start", "COMMAND"),
    _deferred("spine.sandbox.status", "GET", "/v2/sandbox/status"),
    _deferred("spine.sandbox.stop", "POST", "/v2/sandbox/stop", "COMMAND"),
    # never on a market-data node: served by the screener and processes still to come
    # the operator's paper orders, on a paper node: a command each, followed at /v2/commands/{id}
    Operation(
        "spine.orders.submit",
        "POST",
        "/v2/orders",
        "COMMAND",
        schema_ids=("svc.command_result", "svc.order_command"),
        served_by=PAPER,
        requires_paper=True,
        requires_confirmation=True,
        body=OrderBody,
        status=202,
    ),
    Operation(
        "spine.orders.cancel",
        "POST",
        "/v2/orders/cancel",
        "COMMAND",
        schema_ids=("svc.command_result", "svc.cancel_command"),
        served_by=PAPER,
        requires_paper=True,
        requires_confirmation=True,
        body=CancelBody,
        status=202,
    ),
    _paper("spine.commands.get", "/v2/commands/{id}", ("svc.command_result",)),
    Operation(
        "spine.screener.features",
        "GET",
        "/v2/screener/features",
        schema_ids=("svc.feature_page", "svc.feature_spec"),
        params=PAGE,
        served_by=SCREENER,
    ),
    _screener("spine.screener.health", "GET", "/v2/screener/health", schemas=("svc.screener_health",)),
    _screener(
        "spine.screener.instrument",
        "GET",
        "/v2/screener/instrument/{id}",
        schemas=("svc.screener_instrument", "svc.feature_row", "svc.feature_state"),
    ),
    Operation(
        "spine.screener.observations",
        "GET",
        "/v2/screener/observations",
        schema_ids=("svc.observation_page", "svc.pattern_observation"),
        params=("instrument_id", "resolution", "start", "end", *PAGE),
        served_by=SCREENER,
    ),
    Operation(
        "spine.screener.rows",
        "GET",
        "/v2/screener/rows",
        schema_ids=("svc.screener_snapshot", "svc.feature_row"),
        params=("instrument_id", "resolution", *PAGE),
        served_by=SCREENER,
    ),
    Operation(
        "spine.screener.screen",
        "POST",
        "/v2/screener/screen",
        schema_ids=("svc.screen_result", "svc.screen_definition", "svc.screener_row"),
        body=DocumentBody("svc.screen_definition"),
        served_by=SCREENER,
    ),
    Operation(
        "spine.screener.snapshot",
        "GET",
        "/v2/screener/snapshot",
        schema_ids=("svc.screener_snapshot", "svc.feature_row"),
        params=PAGE,
        served_by=SCREENER,
    ),
    Operation(
        "spine.stream.screener",
        "GET",
        "/v2/stream/screener",
        "STREAM",
        ("svc.feature_row", "svc.feature_row_delta", "svc.stream_heartbeat"),
        params=("instrument_id", "resolution"),
        served_by=SCREENER,
        stream="screener",
    ),
    # strategies and backtests: the gateway's own (its database; runs in spine workers)
    _gateway("spine.authoring.registry", "GET", "/v2/authoring/registry", schemas=("svc.strategy_authoring_registry",)),
    _gateway("spine.conditions.registry", "GET", "/v2/conditions/registry", schemas=("svc.condition_registry",)),
    _gateway(
        "spine.strategy_templates.list",
        "GET",
        "/v2/strategy-templates",
        schemas=("svc.template_page", "svc.strategy_template"),
        params=PAGE,
    ),
    _gateway("spine.strategy_templates.get", "GET", "/v2/strategy-templates/{id}", schemas=("svc.strategy_template",)),
    _gateway(
        "spine.strategies.list",
        "GET",
        "/v2/strategies",
        schemas=("svc.strategy_page", "svc.strategy_summary"),
        params=PAGE,
    ),
    Operation(
        "spine.strategies.create",
        "POST",
        "/v2/strategies",
        "COMMAND",
        ("svc.strategy_revision", "svc.strategy_revision_save_request", "svc.strategy_mutation_conflict"),
        body=DocumentBody("svc.strategy_revision_save_request", 2),
        served_by=GATEWAY,
        status=201,
        conflict="svc.strategy_mutation_conflict",
    ),
    _gateway("spine.strategies.get", "GET", "/v2/strategies/{id}", schemas=("svc.strategy_project",)),
    _gateway("spine.strategies.file", "GET", "/v2/strategies/{id}/files/{path}", schemas=("svc.strategy_file",)),
    _gateway(
        "spine.strategies.revisions",
        "GET",
        "/v2/strategies/{id}/revisions",
        schemas=("svc.revision_page", "svc.strategy_revision"),
        params=PAGE,
    ),
    _gateway(
        "spine.strategies.revision",
        "GET",
        "/v2/strategies/{id}/revisions/{revision}",
        schemas=("svc.strategy_revision",),
    ),
    _gateway(
        "spine.strategies.revision_file",
        "GET",
        "/v2/strategies/{id}/revisions/{revision}/files/{path}",
        schemas=("svc.strategy_file",),
    ),
    _gateway(
        "spine.strategies.validate",
        "GET",
        "/v2/strategies/{id}/validate",
        schemas=("svc.validation_receipt",),
        params=("revision_id",),
    ),
    _gateway(
        "spine.backtests.list",
        "GET",
        "/v2/backtests",
        schemas=("svc.backtest_job_page", "svc.backtest_job_summary"),
        params=("strategy_id", "state", *PAGE),
    ),
    Operation(
        "spine.backtests.submit",
        "POST",
        "/v2/backtests",
        "COMMAND",
        ("svc.run_receipt",),
        body=BacktestBody,
        served_by=GATEWAY,
        status=202,
    ),
    _gateway("spine.backtests.get", "GET", "/v2/backtests/{id}", schemas=("svc.backtest_job_detail",)),
    _gateway("spine.backtests.request", "GET", "/v2/backtests/{id}/request", schemas=("svc.backtest_request",)),
    _gateway("spine.backtests.cancel", "GET", "/v2/backtests/{id}/cancel", "COMMAND", ("svc.backtest_job_detail",)),
    _gateway("spine.backtests.report", "GET", "/v2/backtests/{id}/report", schemas=("svc.backtest_run_result",)),
    _gateway(
        "spine.backtests.events",
        "GET",
        "/v2/backtests/{id}/events",
        schemas=("svc.backtest_event_page", "svc.backtest_job_event"),
        params=("after_sequence", *PAGE),
    ),
    _gateway(
        "spine.backtests.outputs",
        "GET",
        "/v2/backtests/{id}/outputs/{part}",
        schemas=("svc.backtest_output_page", *OUTPUT_DOCUMENTS),
        params=PAGE,
    ),
    _gateway(
        "spine.stream.backtests",
        "GET",
        "/v2/stream/backtests",
        "STREAM",
        ("svc.backtest_job_event", "svc.stream_heartbeat"),
        params=("job_id", "after_sequence"),
        stream="backtests",
    ),
    _gateway(
        "spine.studies.list",
        "GET",
        "/v2/studies",
        schemas=("svc.study_page", "svc.optuna_study"),
        params=("strategy_id", "state", *PAGE),
    ),
    Operation(
        "spine.studies.create",
        "POST",
        "/v2/studies",
        "COMMAND",
        ("svc.optuna_study",),
        body=StudyBody,
        served_by=GATEWAY,
        status=201,
    ),
    _gateway("spine.studies.get", "GET", "/v2/studies/{id}", schemas=("svc.optuna_study",)),
    _gateway("spine.studies.best", "GET", "/v2/studies/{id}/best", schemas=("svc.study_best",)),
    # It runs the best trial's parameters on the holdout window (a backtest job): a command.
    _gateway("spine.studies.holdout", "GET", "/v2/studies/{id}/holdout", "COMMAND", ("svc.study_holdout",)),
    Operation(
        "spine.studies.promote",
        "GET",
        "/v2/studies/{id}/promote",
        "COMMAND",
        ("svc.strategy_revision", "svc.strategy_mutation_conflict"),
        served_by=GATEWAY,
        status=201,
        conflict="svc.strategy_mutation_conflict",
    ),
    _gateway("spine.studies.retry", "GET", "/v2/studies/{id}/retry", "COMMAND", ("svc.optuna_study",)),
    _gateway(
        "spine.studies.trials",
        "GET",
        "/v2/studies/{id}/trials",
        schemas=("svc.trial_page", "svc.optuna_trial"),
        params=("state", *PAGE),
    ),
    _gateway("spine.studies.trial", "GET", "/v2/studies/{id}/trials/{trial}", schemas=("svc.optuna_trial",)),
    _gateway("spine.studies.pause", "GET", "/v2/studies/{id}/pause", "COMMAND", ("svc.optuna_study",)),
    _gateway("spine.studies.resume", "GET", "/v2/studies/{id}/resume", "COMMAND", ("svc.optuna_study",)),
    _gateway("spine.studies.cancel", "GET", "/v2/studies/{id}/cancel", "COMMAND", ("svc.optuna_study",)),
    # v1: twelve read routes and the event stream (v1.* documents in schemas/v1/)
    _v1("bars.get", "/bars", ("svc.bar_envelope",), (*BARS, "cursor")),
    _v1("catalog.get", "/catalog", params=PAGE),
    # Signals, chart markers and retirements are what backtest runs produced (the gateway's
    # database); a node holds none (an empty page). ``job_id`` narrows to one run.
    _v1("chart_markers.get", "/chart-markers", ("svc.chart_marker",), (*PAGE, "job_id"), "records", RUNS),
    _v1("engine_status.get", "/engine-status", ("svc.engine_status",), ("job_id",), served_by=RUNS),
    _v1("health.get", "/health"),
    _v1("integration_capabilities.get", "/integration-capabilities", ("svc.integration_capability",)),
    _v1("provenance.get", "/provenance"),
    _v1("readiness.get", "/readiness", ("svc.engine_status",)),
    _v1("retirements.get", "/retirements", ("svc.signal_retirement",), (*PAGE, "job_id"), "records", RUNS),
    _v1("schemas.get", "/schemas", params=("name",)),
    # A node holds no screener rows (an empty page); the screener serves its own.
    _v1("screener_rows.get", "/screener-rows", params=PAGE, document="records", served_by=("node", "screener")),
    _v1("signals.get", "/signals", ("svc.signal_event",), (*PAGE, "job_id"), "records", RUNS),
    Operation(
        "spine.v1.stream",
        "GET",
        "/stream",
        "STREAM",
        params=("cursor", "instrument_id"),
        wire_version="v1",
        stream="v1",
    ),
    # v1: seven fixture routes, fixed example documents for a client's decoders
    *(_fixture(name) for name in V1_FIXTURES),
)
_BY_ID = {op.id: op for op in OPERATIONS}
