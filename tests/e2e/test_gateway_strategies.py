"""Strategy authoring through a real ``spine gateway`` (private-operator; its nodes out of
reach, so instruments are not checked): templates and registries, saving revisions with
conflict detection, exact files, validation, and every refusal. Documents are checked by the
independent validator."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gateways import spawn_gateway
from nodes import envelope, free_port, get, post, stop, wait_for
from screeners import ok

from reference.wire_validator import validate

TEMPLATES = {"ema_cross", "rsi_mean_reversion", "donchian_breakout", "bollinger_reversion"}


def _gateway(directory: Path, mode: str) -> tuple[Any, str]:
    dead = f"http://127.0.0.1:{free_port()}"
    process, url = spawn_gateway(directory, [dead], dead, SPINE_DEPLOYMENT_MODE=mode)
    wait_for(process, lambda: get(url + "/v2/health")[0] == 200, "answering")
    return process, url


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    process, url = _gateway(tmp_path_factory.mktemp("gateway"), "private-operator")
    try:
        yield url
    finally:
        _, err = stop(process)
        assert process.returncode == 0, err


def save(strategy_id: str, parent: str | None, files: dict[str, str], message: str = "") -> dict[str, Any]:
    return {
        "version": "spine.v2",
        "schema_id": "svc.strategy_revision_save_request",
        "schema_version": 2,
        "strategy_id": strategy_id,
        "parent_revision_id": parent,
        "message": message,
        "files": [{"path": path, "content": text} for path, text in files.items()],
    }


def template_files(gateway: str, template_id: str = "ema_cross") -> dict[str, str]:
    template = ok(gateway + f"/v2/strategy-templates/{template_id}")
    return {f["path"]: f["content"] for f in template["files"]}


def test_templates_and_registries(gateway: str) -> None:
    page = ok(gateway + "/v2/strategy-templates")
    assert TEMPLATES <= {t["template_id"] for t in page["items"]}
    for item in page["items"]:
        assert ok(gateway + f"/v2/strategy-templates/{item['template_id']}") == item
    envelope(get(gateway + "/v2/strategy-templates/no_such"), 404, "NOT_FOUND")
    conditions = ok(gateway + "/v2/conditions/registry")
    ids = {c["condition_id"] for c in conditions["conditions"]}
    assert {"all", "any", "gt", "lt", "between", "is_absent", "crosses_above", "crosses_below"} <= ids
    authoring = ok(gateway + "/v2/authoring/registry")
    assert "rsi_14.value" in authoring["row_keys"] and set(authoring["conditions"]) == ids
    assert TEMPLATES <= set(authoring["templates"])


def test_save_list_read_and_validate(gateway: str) -> None:
    files = template_files(gateway)
    status, revision = post(gateway + "/v2/strategies", save("ema_one", None, files, "first"))
    assert status == 201, revision
    validate(revision)
    assert revision["parent_revision_id"] is None and revision["message"] == "first"
    assert sorted(f["path"] for f in revision["files"]) == sorted(files)
    for f in revision["files"]:
        assert f["content_hash"] == hashlib.sha256(files[f["path"]].encode()).hexdigest()
    project = ok(gateway + "/v2/strategies/ema_one")
    assert project["head_revision_id"] == revision["revision_id"] and project["template_id"] == "ema_cross"
    listed = ok(gateway + "/v2/strategies")
    assert "ema_one" in {s["strategy_id"] for s in listed["items"]}
    for path, text in files.items():
        head = ok(gateway + f"/v2/strategies/ema_one/files/{path}")
        assert head["content"] == text and head["revision_id"] is None
        pinned = ok(gateway + f"/v2/strategies/ema_one/revisions/{revision['revision_id']}/files/{path}")
        assert pinned["content"] == text and pinned["revision_id"] == revision["revision_id"]
    assert ok(gateway + f"/v2/strategies/ema_one/revisions/{revision['revision_id']}") == revision
    receipt = ok(gateway + "/v2/strategies/ema_one/validate")
    assert receipt["valid"] is True and receipt["revision_id"] == revision["revision_id"]
    # A second save on the head: revisions are listed newest first, each immutable.
    edited = {**files, "NOTES.md": "why\n"}
    status, second = post(gateway + "/v2/strategies", save("ema_one", revision["revision_id"], edited))
    assert status == 201, second
    assert second["parent_revision_id"] == revision["revision_id"]
    revisions = ok(gateway + "/v2/strategies/ema_one/revisions")
    assert [r["revision_id"] for r in revisions["items"]] == [second["revision_id"], revision["revision_id"]]
    assert (
        ok(gateway + f"/v2/strategies/ema_one/revisions/{revision['revision_id']}/files/strategy.toml")["content"]
        == files["strategy.toml"]
    )
    envelope(
        get(gateway + f"/v2/strategies/ema_one/revisions/{revision['revision_id']}/files/NOTES.md"), 404, "NOT_FOUND"
    )


def test_a_save_on_an_old_head_is_a_conflict(gateway: str) -> None:
    files = template_files(gateway)
    _, base = post(gateway + "/v2/strategies", save("racing", None, files))
    mine = {**files, "strategy.toml": files["strategy.toml"] + "\n# mine\n", "a.md": "a\n"}
    theirs = {**files, "strategy.toml": files["strategy.toml"] + "\n# theirs\n", "b.md": "b\n"}
    status, head = post(gateway + "/v2/strategies", save("racing", base["revision_id"], theirs))
    assert status == 201
    status, conflict = post(gateway + "/v2/strategies", save("racing", base["revision_id"], mine))
    assert status == 409, conflict
    validate(conflict, "svc.strategy_mutation_conflict")
    assert conflict["expected_revision_id"] == base["revision_id"]
    assert conflict["head_revision_id"] == head["revision_id"]
    assert conflict["paths"] == ["strategy.toml"]  # both sides changed it; a.md and b.md are one side's
    assert ok(gateway + "/v2/strategies/racing")["head_revision_id"] == head["revision_id"]  # nothing overwritten
    # Creating a strategy that exists is a conflict too.
    status, again = post(gateway + "/v2/strategies", save("racing", None, files))
    assert status == 409 and again["head_revision_id"] == head["revision_id"]


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("../escape.toml", ".."),
        ("a/../../b.md", ".."),
        ("/abs.md", "relative"),
        ("a\x00b.md", "NUL"),
        ("x" * 300 + ".md", "256"),
        ("main.py", "Python"),
    ],
)
def test_bad_paths_are_refused(gateway: str, path: str, why: str) -> None:
    files = {**template_files(gateway), path: "x"}
    detail = envelope(post(gateway + "/v2/strategies", save("bad_paths", None, files)), 400, "INVALID_BODY")
    assert why in detail, detail
    envelope(get(gateway + "/v2/strategies/bad_paths"), 404, "NOT_FOUND")  # nothing half-saved


def test_two_files_with_one_path_are_refused(gateway: str) -> None:
    body = save("twice", None, template_files(gateway))
    body["files"] += [{"path": "notes.md", "content": "first"}, {"path": "notes.md", "content": "second"}]
    detail = envelope(post(gateway + "/v2/strategies", body), 400, "INVALID_BODY")
    assert "notes.md" in detail and "more than once" in detail, detail
    envelope(get(gateway + "/v2/strategies/twice"), 404, "NOT_FOUND")


def test_oversize_and_bad_bodies_are_refused(gateway: str) -> None:
    files = template_files(gateway)
    many = {**files, **{f"n{i}.md": "x" for i in range(80)}}
    assert "files" in envelope(post(gateway + "/v2/strategies", save("big", None, many)), 400, "INVALID_BODY")
    large = {**files, "big.md": "x" * 300_000}
    assert "bytes" in envelope(post(gateway + "/v2/strategies", save("big", None, large)), 400, "INVALID_BODY")
    body = save("big", None, files)
    envelope(post(gateway + "/v2/strategies", {**body, "extra": 1}), 400, "UNKNOWN_BODY_KEYS")
    envelope(post(gateway + "/v2/strategies", {**body, "schema_version": 1}), 400, "INVALID_BODY")
    envelope(post(gateway + "/v2/strategies", {**body, "strategy_id": "Bad-Id"}), 400, "INVALID_BODY")
    envelope(post(gateway + "/v2/strategies", b'{"version": 1.5}'), 400, "INVALID_BODY")
    envelope(post(gateway + "/v2/strategies", {**body, "files": []}), 400, "INVALID_BODY")


def test_validation_names_file_line_and_reason(gateway: str) -> None:
    files = template_files(gateway)
    broken = files["strategy.toml"].replace('op = "CROSSES_ABOVE"', 'op = "SOARS"', 1)
    assert broken != files["strategy.toml"]
    _, revision = post(gateway + "/v2/strategies", save("broken", None, {"strategy.toml": broken}))
    receipt = ok(gateway + "/v2/strategies/broken/validate")
    assert receipt["valid"] is False
    errors = [d for d in receipt["diagnostics"] if d["severity"] == "ERROR"]
    assert errors and errors[0]["path"] == "strategy.toml" and "SOARS" in errors[0]["message"]
    assert errors[0]["line"] == 1 + broken[: broken.index("SOARS")].count("\n")
    _, unparsable = post(gateway + "/v2/strategies", save("unparsable", None, {"strategy.toml": "[strategy\n"}))
    receipt = ok(gateway + "/v2/strategies/unparsable/validate")
    assert receipt["valid"] is False and receipt["diagnostics"][0]["line"] == 1


def test_unknown_ids(gateway: str) -> None:
    envelope(get(gateway + "/v2/strategies/nope"), 404, "NOT_FOUND")
    envelope(get(gateway + "/v2/strategies/Nope"), 400, "INVALID_PARAMETER")
    envelope(get(gateway + "/v2/strategies/nope/validate"), 404, "NOT_FOUND")
    envelope(get(gateway + "/v2/strategies/nope/revisions/" + "0" * 64), 404, "NOT_FOUND")
    envelope(get(gateway + "/v2/strategies/nope/revisions/xyz"), 404, "NOT_FOUND")


def test_public_readonly_refuses_saves(tmp_path: Path) -> None:
    process, url = _gateway(tmp_path, "public-readonly")
    try:
        envelope(post(url + "/v2/strategies", save("x", None, {"strategy.toml": ""})), 403, "MUTATION_REFUSED")
        assert ok(url + "/v2/strategy-templates")["items"]  # reads stay open
    finally:
        stop(process)


def test_files_nested_too_deep_are_refused_never_a_500(tmp_path: Path) -> None:
    """A save holding a file nested 500 deep is a 400 naming the file, its line and the bound;
    a project stored before the bound (written to the database directly) validates with that
    error and a backtest of it is a 400; none of it is a 500."""
    from spine.jobs import Store
    from spine.strategies.nesting import MAX_NESTING

    process, url = _gateway(tmp_path / "gateway", "private-operator")
    try:
        files = template_files(url)
        deep = "\n" + "a = " + "[" * 500 + "]" * 500 + "\n"
        for path, content in (("notes/deep.toml", deep), ("strategy.toml", files["strategy.toml"] + deep)):
            detail = envelope(
                post(url + "/v2/strategies", save("deep", None, {**files, path: content})), 400, "INVALID_BODY"
            )
            assert f"'{path}' line " in detail and f"at most {MAX_NESTING}" in detail, detail
        with Store(f"sqlite:///{tmp_path / 'gateway' / 'spine.db'}") as store:
            stored = {**files, "notes/deep.toml": deep}
            store.save_revision(
                "deep",
                None,
                "stored before the bound",
                [(p, t, hashlib.sha256(t.encode()).hexdigest()) for p, t in stored.items()],
                "0" * 64,
                [],
                "deep",
                None,
                1,
            )
        receipt = ok(url + "/v2/strategies/deep/validate")
        assert [(d["path"], d["line"], d["severity"]) for d in receipt["diagnostics"]] == [
            ("notes/deep.toml", 2, "ERROR")
        ], receipt
        detail = envelope(post(url + "/v2/backtests", {"strategy_id": "deep"}), 400, "INVALID_BODY")
        assert "notes/deep.toml:2" in detail and f"at most {MAX_NESTING}" in detail, detail
    finally:
        _, err = stop(process)
    assert "RecursionError" not in err and "Traceback" not in err, err[-2000:]
