"""One route table, served per process: each process's app and registry answer an operation
as that process serves it (its own: READY; another process's: UNSUPPORTED, 404
NOT_SUPPORTED_ON_THIS_NODE; a deferred one: UNAVAILABLE, 501), and the node's answers are
those it gave before processes were named."""

from __future__ import annotations

import pytest

from reference.wire_validator import validate
from spine.http.app import App
from spine.http.registry import registry_document
from spine.http.routes import EVERY, OPERATIONS, Operation, relayed, serving

BY_ID = {op.id: op for op in OPERATIONS}


@pytest.mark.parametrize(
    ("op_id", "node", "screener", "gateway"),
    [
        ("spine.bars.list", "handler", "elsewhere", "relayed"),
        ("spine.screener.rows", "elsewhere", "handler", "relayed"),
        ("spine.screener.screen", "elsewhere", "handler", "relayed"),
        ("spine.stream.screener", "elsewhere", "handler", "relayed"),
        ("spine.status.get", "handler", "elsewhere", "handler"),
        ("spine.health.get", "handler", "handler", "handler"),
        ("spine.registry.get", "handler", "handler", "handler"),
        ("spine.strategies.list", "elsewhere", "elsewhere", "handler"),
        ("spine.backtests.submit", "elsewhere", "elsewhere", "handler"),
        ("spine.stream.backtests", "elsewhere", "elsewhere", "handler"),
        ("spine.v1.signals.get", "handler", "elsewhere", "handler"),
        ("spine.v1.engine_status.get", "handler", "elsewhere", "handler"),
        ("spine.studies.list", "elsewhere", "elsewhere", "handler"),
        ("spine.orders.list", "deferred", "deferred", "relayed"),
        ("spine.orders.submit", "deferred", "deferred", "relayed"),
        ("spine.portfolio.get", "deferred", "deferred", "deferred"),
        ("spine.v1.bars.get", "handler", "elsewhere", "relayed"),
        ("spine.v1.screener_rows.get", "handler", "handler", "relayed"),
    ],
)
def test_each_process_serves_its_own_operations(op_id: str, node: str, screener: str, gateway: str) -> None:
    op = BY_ID[op_id]
    assert (serving(op, "node"), serving(op, "screener")) == (node, screener)
    assert ("relayed" if relayed(op, "gateway") else serving(op, "gateway")) == gateway


@pytest.mark.parametrize(
    ("op_id", "paper"),
    [
        ("spine.orders.list", "handler"),
        ("spine.account.get", "handler"),
        ("spine.bars.list", "handler"),  # a venue node all the same
        ("spine.health.get", "handler"),
        ("spine.screener.rows", "elsewhere"),
        ("spine.studies.list", "elsewhere"),
        ("spine.portfolio.get", "deferred"),
        ("spine.sandbox.start", "deferred"),
    ],
)
def test_a_paper_node_serves_what_a_node_does_and_the_execution_reads(op_id: str, paper: str) -> None:
    assert serving(BY_ID[op_id], "paper") == paper


def test_every_process_answers_health_registry_openapi_schemas_and_the_v1_fixtures_itself() -> None:
    shared = {op.id for op in OPERATIONS if op.served_by == EVERY and op.fixture is None}
    assert shared == {
        "spine.health.get",
        "spine.registry.get",
        "spine.openapi.get",
        "spine.schemas.list",
        "spine.schemas.get",
    }
    assert all(op.served_by == EVERY for op in OPERATIONS if op.fixture is not None)


@pytest.mark.parametrize("process", ["node", "screener"])
def test_a_registry_reports_availability_as_its_process_serves(process: str) -> None:
    document = registry_document("p-1", process, deployment_mode="public-readonly", warming=False)  # type: ignore[arg-type]
    validate(document, "svc.capability_registry")
    availability = {entry["id"]: entry["availability"] for entry in document["operations"]}
    own = "spine.bars.list" if process == "node" else "spine.screener.rows"
    other = "spine.screener.rows" if process == "node" else "spine.bars.list"
    assert (availability[own], availability[other], availability["spine.orders.list"]) == (
        "READY",
        "UNSUPPORTED",
        "UNAVAILABLE",
    )
    assert availability["spine.selection.set"] == ("DISABLED" if process == "node" else "UNSUPPORTED")


def test_a_warming_process_reports_its_own_operations_warming() -> None:
    document = registry_document("p-1", "node", deployment_mode="private-operator", warming=True)
    availability = {entry["id"]: entry["availability"] for entry in document["operations"]}
    assert availability["spine.bars.list"] == availability["spine.selection.set"] == "WARMING"
    assert availability["spine.screener.rows"] == "UNSUPPORTED"


def test_an_apps_openapi_answers_as_its_process() -> None:
    import json

    node, screener = (
        json.loads(App(p, (), (), deployment_mode="public-readonly").openapi)  # type: ignore[arg-type]
        for p in ("node", "screener")
    )
    assert list(node["paths"]["/v2/screener/rows"]["get"]["responses"]) == ["404"]
    assert "200" in screener["paths"]["/v2/screener/rows"]["get"]["responses"]
    assert list(screener["paths"]["/v2/bars"]["get"]["responses"]) == ["404"]
    assert (node["info"]["title"], screener["info"]["title"]) == ("Spine venue node", "Spine screener")


def test_every_stream_is_named_in_the_route_table() -> None:
    """A process's app serves a stream by its name in the table, never by its operation id."""
    streams = {op.id: op.stream for op in OPERATIONS if op.effect == "STREAM"}
    assert streams == {
        "spine.stream.bars": "bars",
        "spine.stream.quotes": "quotes",
        "spine.stream.trades": "trades",
        "spine.execution.stream": "execution",
        "spine.stream.screener": "screener",
        "spine.stream.backtests": "backtests",
        "spine.v1.stream": "v1",
    }
    assert all(op.stream is None for op in OPERATIONS if op.effect != "STREAM")
    with pytest.raises(ValueError, match="names its stream"):
        Operation("spine.stream.nameless", "GET", "/v2/stream/nameless", "STREAM")
