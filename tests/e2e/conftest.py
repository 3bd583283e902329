"""End-to-end fixtures: ``base``, a ``spine node`` process per test module (see nodes.py,
which also holds the HTTP helpers test modules import)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from nodes import running_node


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A running node's base URL, shared by one module's tests. A node that fails to start
    fails the first test with its stderr; pytest caches the failure for the rest."""
    with running_node(tmp_path_factory.mktemp("http")) as url:
        yield url
