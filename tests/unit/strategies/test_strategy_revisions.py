"""Revisions: ids stable and order-independent, conflicts are the paths changed on both sides,
and every strategy document validates against its schema."""

from __future__ import annotations

import hashlib

from hypothesis import given
from hypothesis import strategies as st
from strategy_schemas import schema_errors

from spine import identity
from spine.strategies.diagnostics import Diagnostic
from spine.strategies.document import validate
from spine.strategies.revisions import (
    changed_paths,
    conflict_document,
    conflict_paths,
    content_hash,
    content_hashes,
    file_document,
    project_document,
    revision_document,
    revision_id,
    revision_instruments,
    summary_document,
    validation_receipt,
)
from spine.strategies.templates import template_files

FILES = {**template_files("ema_cross"), "notes/README.md": "# Notes\n", "data/levels.csv": "a,b\n1,2\n"}
PARENT = "ab" * 32
TS = 1_767_225_600_000_000_000


def test_content_hash_is_sha256_of_utf8() -> None:
    assert content_hash("é") == hashlib.sha256("é".encode()).hexdigest()
    assert content_hash("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def test_revision_id_is_the_identity_over_parent_and_sorted_files() -> None:
    expected = identity(
        "revision_id",
        {
            "parent_revision_id": PARENT,
            "files": [{"path": p, "content_hash": content_hash(FILES[p])} for p in sorted(FILES)],
        },
    )
    assert revision_id(PARENT, FILES) == expected
    assert revision_id(PARENT, dict(reversed(list(FILES.items())))) == expected
    assert revision_id(None, FILES) != expected
    assert revision_id(PARENT, {**FILES, "notes/README.md": "# Notes"}) != expected
    # Pinned: a change to the identity rule is a change to every stored revision id.
    assert revision_id(None, {"strategy.toml": ""}) == identity(
        "revision_id",
        {"parent_revision_id": None, "files": [{"path": "strategy.toml", "content_hash": content_hash("")}]},
    )


@given(
    st.dictionaries(st.sampled_from(["strategy.toml", "a.md", "b/c.csv", "d.json"]), st.text(max_size=20), min_size=1),
    st.randoms(),
)
def test_revision_ids_are_order_independent(files: dict[str, str], random: object) -> None:
    items = list(files.items())
    random.shuffle(items)  # type: ignore[attr-defined]
    assert revision_id(None, dict(items)) == revision_id(None, files)


def test_changed_and_conflicting_paths() -> None:
    base = {"a": "1", "b": "2", "c": "3"}
    head = {"a": "1", "b": "20", "d": "4"}  # b modified, c removed, d added
    save = {"a": "10", "b": "21", "c": "3", "d": "5"}  # a, b modified, d added
    assert changed_paths(base, head) == {"b", "c", "d"}
    assert changed_paths(base, save) == {"a", "b", "d"}
    assert conflict_paths(base, head, save) == ["b", "d"]
    assert conflict_paths(base, base, save) == []
    assert changed_paths(base, base) == set()


def test_revision_document() -> None:
    document = revision_document(
        strategy_id="my_ema", parent_revision_id=None, message="first", files=FILES, created_ts=TS
    )
    assert schema_errors("svc.strategy_revision", document) == []
    assert document["schema_version"] == 2 and document["revision_id"] == revision_id(None, FILES)
    assert [f["path"] for f in document["files"]] == sorted(FILES)
    assert document["instruments"] == ["BTCUSDT.SIM"] and document["created_ts"] == str(TS)
    child = revision_document(
        strategy_id="my_ema",
        parent_revision_id=document["revision_id"],
        message="",
        files={"strategy.toml": "[strategy"},
        created_ts=TS + 1,
    )
    assert schema_errors("svc.strategy_revision", child) == [] and child["instruments"] == []


def test_revision_instruments_are_those_of_strategy_toml() -> None:
    text = FILES["strategy.toml"].replace('["BTCUSDT.SIM"]', '["BTCUSDT.SIM", "ETHUSDT.OTHER"]')
    assert revision_instruments({"strategy.toml": text}) == ["BTCUSDT.SIM", "ETHUSDT.OTHER"]
    assert revision_instruments({"notes.md": ""}) == []


def test_file_project_and_summary_documents() -> None:
    document = file_document(strategy_id="my_ema", revision_id=None, path="notes/README.md", content="# Notes\n")
    assert schema_errors("svc.strategy_file", document) == []
    assert document["content_hash"] == content_hash("# Notes\n")
    assert schema_errors("svc.strategy_file", {**document, "revision_id": PARENT}) == []
    project = project_document(
        strategy_id="my_ema",
        name="EMA cross",
        template_id="ema_cross",
        head_revision_id=PARENT,
        files=FILES,
        created_ts=TS,
        updated_ts=TS + 5,
    )
    assert schema_errors("svc.strategy_project", project) == []
    assert [(f["path"], f["content_hash"]) for f in project["files"]] == list(content_hashes(FILES).items())
    assert project["files"][0]["bytes"] == len(FILES[project["files"][0]["path"]].encode())
    empty = project_document(
        strategy_id="my_ema", name="x", template_id=None, head_revision_id=None, files={}, created_ts=TS, updated_ts=TS
    )
    assert schema_errors("svc.strategy_project", empty) == []
    summary = summary_document(
        strategy_id="my_ema",
        name="EMA cross",
        template_id=None,
        head_revision_id=PARENT,
        revisions=3,
        created_ts=TS,
        updated_ts=TS,
    )
    assert schema_errors("svc.strategy_summary", summary) == []


def test_conflict_document() -> None:
    document = conflict_document(
        strategy_id="my_ema", expected_revision_id=PARENT, head_revision_id="cd" * 32, paths=["b.md", "a.md", "b.md"]
    )
    assert schema_errors("svc.strategy_mutation_conflict", document) == []
    assert document["paths"] == ["a.md", "b.md"] and "a.md, b.md" in document["detail"]
    first = conflict_document(strategy_id="my_ema", expected_revision_id=None, head_revision_id=PARENT, paths=[])
    assert schema_errors("svc.strategy_mutation_conflict", first) == []


def test_validation_receipts() -> None:
    valid = validation_receipt(strategy_id="my_ema", revision_id=PARENT, diagnostics=validate(FILES), ts_event=TS)
    assert schema_errors("svc.validation_receipt", valid) == [] and valid["valid"] is True
    broken = {
        **FILES,
        "strategy.toml": FILES["strategy.toml"]
        .replace('kind = "ema"', 'kind = "kama"')
        .replace("entry_long", "entry_short", 1),
        "x.py": "",
        "../y.md": "",
    }
    diagnostics = validate(broken)
    invalid = validation_receipt(strategy_id="my_ema", revision_id=None, diagnostics=diagnostics, ts_event=TS)
    assert schema_errors("svc.validation_receipt", invalid) == [] and invalid["valid"] is False
    assert len(invalid["diagnostics"]) >= 3
    warned = validation_receipt(
        strategy_id="my_ema",
        revision_id=PARENT,
        ts_event=TS,
        diagnostics=[Diagnostic("strategy.toml", 3, "WARNING", "w")],
    )
    assert schema_errors("svc.validation_receipt", warned) == [] and warned["valid"] is True
