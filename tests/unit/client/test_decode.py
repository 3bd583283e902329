"""The client's decode of a gateway answer, on committed example documents: a 200 carrying the
route's document comes back unchanged, one breaking the contract raises the decoder's step;
an error envelope raises GatewayError with its status, code and detail; a 409 conflict
document raises GatewayError naming the conflict schema; a body that is no envelope still
raises GatewayError on its status. And ``strategy_files``, a project directory's files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from spine.client import Answer, ContractViolation, GatewayError, decode, strategy_files, tool, tools
from spine.http.openapi import openapi_document
from spine.http.routes import OPERATIONS
from spine.wire.decoder import (
    MissingSchemaTag,
    NotAnObject,
    SchemaIdMismatch,
    StructuralViolation,
    UnsupportedSchema,
    UnsupportedWireVersion,
)
from spine.wire.errors import ERROR_CODES, error_body

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "tests" / "data" / "wire_examples"
DOCUMENTED = sorted(t.name for t in tools() if t.document is not None)
CONFLICTED = sorted(t.name for t in tools() if t.conflict is not None)


def example(schema_id: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((EXAMPLES / f"{schema_id}.json").read_text(encoding="utf-8"))
    return loaded


def body(document: object) -> bytes:
    return json.dumps(document).encode()


def ok(document: object) -> Answer:
    return Answer(200, body(document))


# --- a 200 -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", DOCUMENTED)
def test_a_200_carrying_the_routes_document_is_returned_unchanged(name: str) -> None:
    """Every tool with a document: its committed example decodes to itself."""
    document = example(tool(name).document or "")
    assert decode(ok(document), tool(name)) == document


@pytest.mark.parametrize("name", DOCUMENTED)
def test_a_200_carrying_another_document_is_a_schema_id_mismatch(name: str) -> None:
    expected = tool(name).document
    other = "svc.resolutions" if expected == "svc.health" else "svc.health"
    with pytest.raises(SchemaIdMismatch, match=f"expected '{expected}'"):
        decode(ok(example(other)), tool(name))


def edited(**changes: Any) -> dict[str, Any]:
    """The health example with ``changes`` (None removes a key)."""
    document = example("svc.health")
    for key, value in changes.items():
        if value is None:
            document.pop(key)
        else:
            document[key] = value
    return document


@pytest.mark.parametrize(
    ("raw", "violation"),
    [
        (b"", NotAnObject),
        (b"<html><body>502 Bad Gateway</body></html>", NotAnObject),
        (b"[]", NotAnObject),
        (b'{"version":"spine.v2","schema_id":"svc.health","schema_version":1,"ts_event":1.5}', NotAnObject),
        (body(edited(schema_id=None)), MissingSchemaTag),
        (body(edited(schema_version="1")), MissingSchemaTag),
        (body(edited(schema_version=99)), UnsupportedSchema),
        (body(edited(version="spine.v1")), UnsupportedWireVersion),
        (body(edited(live=None)), StructuralViolation),
        (body(edited(ts_event=1700000220000000000)), StructuralViolation),
    ],
    ids=[
        "empty",
        "html",
        "array",
        "float",
        "no-schema-id",
        "string-version",
        "unknown-version",
        "v1",
        "no-live",
        "int-ts",
    ],
)
def test_a_200_breaking_the_contract_raises_the_decoders_step(raw: bytes, violation: type[ContractViolation]) -> None:
    """Never repaired, never a GatewayError: the step's own ContractViolation subclass."""
    with pytest.raises(violation) as raised:
        decode(Answer(200, raw), tool("health_get"))
    assert type(raised.value) is violation


def test_an_untagged_document_comes_back_parsed() -> None:
    """schemas_get and openapi_get answer a schema file and the OpenAPI document: parsed JSON."""
    schema = json.loads((ROOT / "schemas" / "own" / "svc.health.json").read_text(encoding="utf-8"))
    assert decode(ok(schema), tool("schemas_get")) == schema
    openapi = openapi_document(OPERATIONS, "gateway")
    assert decode(ok(openapi), tool("openapi_get")) == json.loads(json.dumps(openapi))


# --- an error envelope -----------------------------------------------------------------------


@pytest.mark.parametrize("symbol", sorted(ERROR_CODES))
def test_an_error_envelope_raises_its_status_code_and_detail(symbol: str) -> None:
    row = ERROR_CODES[symbol]
    raw = body(error_body(symbol, "what went wrong"))
    with pytest.raises(GatewayError) as raised:
        decode(Answer(row.http_status, raw), tool("bars_list"))
    error = raised.value
    assert (error.status, error.code, error.detail, error.body) == (
        row.http_status,
        row.code,
        f"{symbol}: what went wrong",
        raw,
    )
    assert error.symbol == symbol
    assert str(error) == f"HTTP {row.http_status}: {symbol}: what went wrong"


@pytest.mark.parametrize("name", ["schemas_get", "openapi_get", "stream_bars"])
def test_an_untagged_tools_error_is_still_an_envelope(name: str) -> None:
    with pytest.raises(GatewayError) as raised:
        decode(Answer(404, body(error_body("NOT_FOUND", "no such schema file"))), tool(name))
    assert (raised.value.code, raised.value.detail) == (40401, "NOT_FOUND: no such schema file")


def test_a_409_envelope_on_a_route_without_a_conflict_document() -> None:
    with pytest.raises(GatewayError) as raised:
        decode(Answer(409, body(error_body("CONFLICT", "already queued"))), tool("backtests_submit"))
    assert (raised.value.status, raised.value.code, raised.value.detail) == (409, 40901, "CONFLICT: already queued")


# --- a 409 conflict document -----------------------------------------------------------------


@pytest.mark.parametrize("name", CONFLICTED)
def test_a_409_conflict_document_raises_naming_the_conflict_schema(name: str) -> None:
    """strategies_create and studies_promote: code None, the detail the schema id then the
    document's own detail, the body as it came."""
    assert tool(name).conflict == "svc.strategy_mutation_conflict"
    conflict = example("svc.strategy_mutation_conflict")
    raw = body(conflict)
    with pytest.raises(GatewayError) as raised:
        decode(Answer(409, raw), tool(name))
    error = raised.value
    assert (error.status, error.code, error.body) == (409, None, raw)
    assert error.detail == f"svc.strategy_mutation_conflict: {conflict['detail']}"


@pytest.mark.parametrize("name", CONFLICTED)
def test_a_409_envelope_on_a_route_with_a_conflict_document_is_still_an_envelope(name: str) -> None:
    with pytest.raises(GatewayError) as raised:
        decode(Answer(409, body(error_body("CONFLICT", "the head moved"))), tool(name))
    assert (raised.value.code, raised.value.detail) == (40901, "CONFLICT: the head moved")


def test_a_broken_conflict_document_is_a_contract_violation() -> None:
    """The conflict document is checked too: one missing its head is not passed on as detail."""
    conflict = example("svc.strategy_mutation_conflict")
    del conflict["head_revision_id"]
    with pytest.raises(StructuralViolation, match="head_revision_id"):
        decode(Answer(409, body(conflict)), tool("strategies_create"))


# --- an error that is no envelope ------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"<html><body>502 Bad Gateway</body></html>",
        b"[]",
        b'{"error": "upstream down"}',
        body({**error_body("INTERNAL", "x"), "version": "spine.v1"}),
        b'{"version":"spine.v2","error":{"code":50001}}',
    ],
    ids=["empty", "html", "array", "foreign-json", "v1-envelope", "no-detail"],
)
@pytest.mark.parametrize("status", [404, 409, 502])
def test_an_error_without_an_envelope_raises_on_its_status(raw: bytes, status: int) -> None:
    """A proxy's page or an empty body: GatewayError with the status, code None, the body as
    it came and a detail saying there was no envelope (a 409 on a conflict route included)."""
    with pytest.raises(GatewayError) as raised:
        decode(Answer(status, raw), tool("strategies_create"))
    error = raised.value
    assert (error.status, error.code, error.body) == (status, None, raw)
    assert error.detail.startswith("no error envelope (")


@pytest.mark.parametrize("raw", [b"", b"<html></html>"], ids=["empty", "html"])
def test_an_error_without_an_envelope_has_the_generic_symbol(raw: bytes) -> None:
    """Whatever the body, a missing envelope names no wire symbol: GATEWAY_ERROR."""
    with pytest.raises(GatewayError) as raised:
        decode(Answer(502, raw), tool("health_get"))
    assert raised.value.symbol == "GATEWAY_ERROR"


# --- strategy_files --------------------------------------------------------------------------


def write(root: Path, relative: str, content: str | bytes) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")


def test_strategy_files_are_every_file_by_relative_posix_path(tmp_path: Path) -> None:
    """Nested files by POSIX path, UTF-8 text as written; hidden files and directories and
    __pycache__ at any depth left out (a .pyc would not even be text)."""
    project = tmp_path / ".cache" / "project"  # a hidden parent is not the project's own
    shown = {"strategy.py": "x = 1\n", "lib/helpers.py": "# café €\n", "lib/deep/data.toml": "a = 'b'\n"}
    for relative, content in shown.items():
        write(project, relative, content)
    write(project, ".env", "SECRET=1\n")
    write(project, ".git/config", "[core]\n")
    write(project, "lib/.hidden.py", "")
    write(project, "__pycache__/strategy.cpython-311.pyc", b"\x00\xff\xfe")
    write(project, "lib/__pycache__/helpers.cpython-311.pyc", b"\x00\xff\xfe")
    files = strategy_files(project)
    assert sorted(f["path"] for f in files) == sorted(shown)
    assert {f["path"]: f["content"] for f in files} == shown
    assert all(set(f) == {"path", "content"} for f in files)
    assert strategy_files(str(project)) == files


def test_an_empty_directory_has_no_files(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert strategy_files(tmp_path / "empty") == []


@pytest.mark.parametrize("what", ["a-file", "missing"])
def test_a_path_that_is_not_a_directory_is_refused(tmp_path: Path, what: str) -> None:
    path = tmp_path / "strategy.py"
    if what == "a-file":
        path.write_text("x = 1\n", encoding="utf-8")
    with pytest.raises(NotADirectoryError, match="is not a directory"):
        strategy_files(path)
