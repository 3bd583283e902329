"""spine.identity against orjson + hashlib and json.dumps + hashlib, side by side in one run.

Run: `pytest benches/bench_identity.py --benchmark-group-by=param:doc_name`
Smoke (CI): `pytest benches --benchmark-disable` runs each case once and checks equality.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from benches.documents import DOCUMENTS
from benches.identity_paths import PATHS


@pytest.mark.parametrize("doc_name", sorted(DOCUMENTS))
def test_rivals_agree(doc_name: str) -> None:
    """The correctness flag: every path yields the same identity before anything is timed."""
    doc = DOCUMENTS[doc_name]()
    results = {label: path("config_hash", doc) for label, path in PATHS.items()}
    assert len(set(results.values())) == 1, results


@pytest.mark.parametrize("path_name", list(PATHS))
@pytest.mark.parametrize("doc_name", sorted(DOCUMENTS))
def test_identity(benchmark: BenchmarkFixture, doc_name: str, path_name: str) -> None:
    doc: Any = DOCUMENTS[doc_name]()
    path: Callable[[str, Any], str] = PATHS[path_name]
    benchmark.group = f"identity {doc_name}"
    expected = PATHS["spine"]("config_hash", doc)
    assert benchmark(path, "config_hash", doc) == expected
