"""The seven v1 fixture routes (docs/contract.md, "v1 routes"): each answers a committed example
``v1.*`` document, valid for its v1 schema by the independent validator, as its canonical bytes
(checked against the reference canonicalizer); and the route table's counts (spec, "What the
service does" 6: v1 is 12 runtime routes and 7 fixture routes; v2 has 11 POST routes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reference.canonical_json import canonical_dumps
from reference.wire_validator import validate
from spine.http.fixtures import FIXTURE_DIR, fixture_bytes
from spine.http.routes import EVERY, OPERATIONS, V1_FIXTURES

COMMITTED = Path(__file__).resolve().parents[2] / "python" / "spine" / "_fixtures"
FIXTURES = [op for op in OPERATIONS if op.fixture is not None]


@pytest.mark.parametrize("name", V1_FIXTURES)
def test_each_fixture_is_valid_for_its_v1_schema(name: str) -> None:
    document = json.loads((COMMITTED / f"v1.{name}.json").read_bytes())
    assert (document["version"], document["schema_id"]) == ("spine.v1", f"v1.{name}")
    validate(document)


@pytest.mark.parametrize("name", V1_FIXTURES)
def test_each_fixture_is_served_as_the_committed_files_canonical_bytes(name: str) -> None:
    committed = (COMMITTED / f"v1.{name}.json").read_bytes()
    assert (FIXTURE_DIR / f"v1.{name}.json").read_bytes() == committed  # the package holds the committed file
    assert fixture_bytes(f"v1.{name}") == canonical_dumps(json.loads(committed))


@pytest.mark.parametrize("name", V1_FIXTURES)
def test_fixtures_are_marked_as_fixtures(name: str) -> None:
    """Whatever names a run is ``fixture-run``; times are fixed instants of November 2023."""
    document = json.loads((COMMITTED / f"v1.{name}.json").read_bytes())
    runs = {v for k, v in _items(document) if k == "run_id"}
    assert runs <= {"fixture-run"}
    assert all(
        v.startswith(("1699999", "1700000")) for k, v in _items(document) if k.startswith("ts_") and isinstance(v, str)
    )


def test_the_package_holds_exactly_the_seven_fixtures() -> None:
    assert sorted(p.name for p in COMMITTED.glob("*.json")) == sorted(f"v1.{n}.json" for n in V1_FIXTURES)


def test_each_fixture_route_is_a_parameterless_v1_get_every_process_serves() -> None:
    assert [op.id for op in FIXTURES] == [f"spine.v1.fixtures.{n}" for n in V1_FIXTURES]
    for op in FIXTURES:
        name = op.id.removeprefix("spine.v1.fixtures.")
        assert (op.method, op.effect, op.wire_version, op.path) == (
            "GET",
            "QUERY",
            "v1",
            "/fixtures/" + name.replace("_", "-"),
        )
        assert (op.params, op.served_by, op.deferred) == ((), EVERY, False)
        assert op.document == op.fixture == f"v1.{name}"


def test_v1_is_twelve_runtime_routes_seven_fixture_routes_and_its_stream() -> None:
    v1 = [op for op in OPERATIONS if op.wire_version == "v1"]
    runtime = [op for op in v1 if op.fixture is None and op.effect == "QUERY"]
    assert [op.path for op in runtime] == [
        "/bars",
        "/catalog",
        "/chart-markers",
        "/engine-status",
        "/health",
        "/integration-capabilities",
        "/provenance",
        "/readiness",
        "/retirements",
        "/schemas",
        "/screener-rows",
        "/signals",
    ]
    assert len(FIXTURES) == 7
    assert [op.path for op in v1 if op.effect == "STREAM"] == ["/stream"]  # the v1 event stream
    assert len(v1) == 12 + 7 + 1


def test_v2_has_the_specs_eleven_post_routes() -> None:
    assert sum(op.wire_version == "v2" and op.method == "POST" for op in OPERATIONS) == 11


def _items(node: object) -> list[tuple[str, object]]:
    if isinstance(node, dict):
        return [*node.items(), *(kv for v in node.values() for kv in _items(v))]
    if isinstance(node, list):
        return [kv for v in node for kv in _items(v)]
    return []
