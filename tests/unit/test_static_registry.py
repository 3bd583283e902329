"""The static registry (docs/registry.json, spec "Versioning" 5): generated from the route
tables, and checked against them operation by operation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_args

import pytest

from spine.http.registry import main, static_registry, static_registry_text
from spine.http.routes import Process

COMMITTED = Path(__file__).resolve().parents[2] / "docs" / "registry.json"


def _committed() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(COMMITTED.read_text(encoding="utf-8"))
    return loaded


def test_the_committed_registry_names_every_process_of_the_route_table() -> None:
    assert list(_committed()["processes"]) == list(get_args(Process))


@pytest.mark.parametrize("process", get_args(Process))
def test_the_committed_registry_matches_the_route_tables(process: str) -> None:
    committed = {op["id"]: op for op in _committed()["processes"].get(process, [])}
    live = {op["id"]: op for op in static_registry()[process]}
    regenerate = "; regenerate with python -m spine.http.registry --write"
    added, removed = sorted(live.keys() - committed.keys()), sorted(committed.keys() - live.keys())
    assert not added, f"{process}: not in docs/registry.json: {added}{regenerate}"
    assert not removed, f"{process}: no longer in the route table: {removed}{regenerate}"
    for op_id, entry in live.items():
        assert committed[op_id] == entry, f"{process}: {op_id} differs from docs/registry.json{regenerate}"
    assert list(committed) == list(live), f"{process}: operations out of order{regenerate}"


def test_the_committed_file_is_exactly_the_generated_text() -> None:
    assert COMMITTED.read_text(encoding="utf-8") == static_registry_text()
    assert main(["--check", str(COMMITTED)]) == 0


def test_check_fails_on_a_stale_file_and_write_repairs_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stale = tmp_path / "registry.json"
    stale.write_text(static_registry_text().replace('"READY"', '"UNKNOWN"', 1), encoding="utf-8")
    assert main(["--check", str(stale)]) == 1
    assert "--write" in capsys.readouterr().err
    assert main(["--write", str(stale)]) == 0
    assert main(["--check", str(stale)]) == 0
    assert main(["--check", str(tmp_path / "missing.json")]) == 1
