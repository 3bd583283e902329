"""The docs describe the tree as it is (scripts/check_docs.py): short contract bullets, a performance
document under its line budget, a README layout naming every package, a tests README naming every folder.
Each check runs on the repository, then on a small tree built to break it, so a check that passes
vacuously fails here."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "check_docs.py"


def _load() -> ModuleType:
    # scripts/ is no package: the checker is loaded from its file, as CI runs it.
    spec = importlib.util.spec_from_file_location("check_docs", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


check_docs = _load()

LAYOUT = """# Spine

## Layout

```
rust/core/         the core
python/spine/      the package
  node/            the node
  gateway/ jobs/   the gateway and its jobs
schemas/           the schemas
```

## Next
"""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A repository the checks pass on: two packages, two test folders, docs within their budgets."""
    for package in ("node", "gateway", "jobs"):
        (tmp_path / "python" / "spine" / package).mkdir(parents=True)
        (tmp_path / "python" / "spine" / package / "__init__.py").write_text("")
    (tmp_path / "python" / "spine" / "_fixtures").mkdir()
    for folder in ("unit", "unit/jobs"):
        (tmp_path / "tests" / folder).mkdir(parents=True)
        (tmp_path / "tests" / folder / "test_x.py").write_text("")
    (tmp_path / "tests" / "unit" / "__pycache__").mkdir()
    (tmp_path / "tests" / "unit" / "__pycache__" / "x.pyc").write_text("")
    (tmp_path / "tests" / "README.md").write_text("- `unit/`: in process\n- `unit/jobs/`: the job store\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "contract.md").write_text("## A\n\n- " + "x" * 298 + "\n")
    (tmp_path / "docs" / "performance.md").write_text("line\n" * 399)
    (tmp_path / "README.md").write_text(LAYOUT)
    assert check_docs.failures(tmp_path) == []
    return tmp_path


@pytest.mark.parametrize("check", check_docs.CHECKS, ids=lambda check: check.__name__)
def test_the_docs_pass_the_check(check: object) -> None:
    assert callable(check)
    assert check(check_docs.ROOT) == []


def test_a_contract_bullet_over_300_characters_fails_wrapped_or_not(tree: Path) -> None:
    contract = tree / "docs" / "contract.md"
    contract.write_text("## A\n\n- " + "x" * 299 + "\n- short\n  " + "y" * 300 + "\n")
    assert check_docs.check_contract(tree) == [
        "docs/contract.md:3: bullet of 301 characters (at most 300)",
        "docs/contract.md:4: bullet of 308 characters (at most 300)",
    ]


def test_a_performance_document_of_400_lines_fails(tree: Path) -> None:
    (tree / "docs" / "performance.md").write_text("line\n" * 400)
    assert check_docs.check_performance(tree) == ["docs/performance.md: 400 lines (at most 399)"]


def test_a_package_missing_from_the_layout_fails(tree: Path) -> None:
    (tree / "python" / "spine" / "worker").mkdir()
    (tree / "python" / "spine" / "worker" / "__init__.py").write_text("")
    assert check_docs.check_readme(tree) == ["README.md: the layout names no package worker/ under python/spine/"]


def test_a_package_named_only_outside_python_spine_fails(tree: Path) -> None:
    (tree / "README.md").write_text(LAYOUT.replace("  gateway/ jobs/", "  gateway/      ") + "jobs/ elsewhere\n")
    assert check_docs.check_readme(tree) == ["README.md: the layout names no package jobs/ under python/spine/"]


def test_a_layout_longer_than_a_screen_fails(tree: Path) -> None:
    (tree / "README.md").write_text(LAYOUT.replace("schemas/", "\n" * 40 + "schemas/"))
    assert check_docs.check_readme(tree) == ["README.md: the layout section has 49 lines (at most 40)"]


def test_a_test_folder_missing_from_the_tests_readme_fails(tree: Path) -> None:
    (tree / "tests" / "unit" / "gateway").mkdir()
    (tree / "tests" / "unit" / "gateway" / "test_y.py").write_text("")
    (tree / "tests" / "empty").mkdir()
    assert check_docs.check_tests_readme(tree) == ["tests/README.md: names no folder `unit/gateway/`"]
