"""File paths and file sets: every refusal names the path and the rule; accepted paths are
returned as sent (never rewritten) and match the schemas' file_path."""

from __future__ import annotations

import posixpath
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategy_schemas import LOADED

from spine.errors import SpineError
from spine.strategies import StrategyFileError
from spine.strategies.paths import (
    ENTRY,
    MAX_FILE_BYTES,
    MAX_FILES,
    MAX_PATH_LENGTH,
    MAX_TOTAL_BYTES,
    check_files,
    check_path,
)

FILE_PATH = re.compile(LOADED["svc.strategy_file.json"]["$defs"]["file_path"]["pattern"])


def refused(call: object, *words: str) -> StrategyFileError:
    with pytest.raises(StrategyFileError) as caught:
        call()  # type: ignore[operator]
    error = caught.value
    assert isinstance(error, SpineError) and isinstance(error, ValueError)
    assert str(error).startswith("INVALID_STRATEGY_FILE: ")
    for word in words:
        assert word in str(error)
    return error


@pytest.mark.parametrize(
    "path",
    [
        "strategy.toml",
        "notes/README.md",
        "data/2024-01.csv",
        "a/b/c.json",
        "x.txt",
        "params.v2.toml",
        "-odd_name.md",
        "..hidden.md",
        "a.../b.md",
    ],
)
def test_accepted_paths_come_back_as_sent(path: str) -> None:
    assert check_path(path) == path
    assert FILE_PATH.match(path)


@pytest.mark.parametrize(
    ("path", "rule"),
    [
        ("../strategy.toml", "'..' segment"),
        ("notes/../../etc/passwd.txt", "'..' segment"),
        ("./strategy.toml", "'.' segment"),
        ("notes/./a.md", "'.' segment"),
        ("/etc/x.md", "absolute"),
        ("notes//a.md", "empty segment"),
        ("notes/", "empty segment"),
        ("", "empty"),
        ("a\x00.md", "NUL"),
        ("notes\\a.md", "backslash"),
        ("notes/a b.md", "may hold only"),
        ("nötes.md", "may hold only"),
        ("strategy.py", "Python strategy modules are not accepted"),
        ("lib/module.PY", "Python strategy modules are not accepted"),
        ("run.sh", "notes or data files"),
        ("Makefile", "notes or data files"),
    ],
)
def test_refused_paths_name_the_path_and_the_rule(path: str, rule: str) -> None:
    error = refused(lambda: check_path(path), rule)
    if path:
        assert repr(path)[:40] in str(error) or "NUL" in rule


def test_path_length_cap() -> None:
    longest = "a/" * ((MAX_PATH_LENGTH - 3) // 2) + "b.md"
    longest = longest[-MAX_PATH_LENGTH:] if len(longest) > MAX_PATH_LENGTH else longest
    assert check_path(longest) == longest
    refused(lambda: check_path("n" * (MAX_PATH_LENGTH - 2) + ".md"), f"at most {MAX_PATH_LENGTH}")


def test_too_many_files() -> None:
    files = {ENTRY: ""} | {f"n{i}.md": "" for i in range(MAX_FILES)}
    refused(lambda: check_files(files), f"{MAX_FILES + 1} files", f"at most {MAX_FILES}")
    check_files(dict(list(files.items())[:MAX_FILES]))


def test_oversize_file_and_revision() -> None:
    refused(lambda: check_files({ENTRY: "x" * (MAX_FILE_BYTES + 1)}), "'strategy.toml'", "256 KiB")
    check_files({ENTRY: "x" * MAX_FILE_BYTES})
    # UTF-8 bytes count, not characters.
    refused(lambda: check_files({ENTRY: "é" * (MAX_FILE_BYTES // 2 + 1)}), "256 KiB")
    files = {ENTRY: ""} | {f"d{i}.csv": "x" * MAX_FILE_BYTES for i in range(4)} | {"e.csv": "y"}
    refused(lambda: check_files(files), f"at most {MAX_TOTAL_BYTES} bytes")


def test_the_entry_is_required_and_bad_paths_are_named() -> None:
    refused(lambda: check_files({"notes.md": ""}), "no strategy.toml")
    error = refused(lambda: check_files({ENTRY: "", "../x.md": "", "y.py": ""}), "'..' segment", "Python")
    assert error.path == "y.py"  # the first well-formed path refused; '../x.md' is named in the text


def test_content_must_be_utf8() -> None:
    refused(lambda: check_files({ENTRY: "\ud800"}), "lone surrogate")


SEGMENT = st.text(alphabet="abcXYZ019_.-", min_size=1, max_size=12)


@given(st.lists(SEGMENT, min_size=1, max_size=8), st.sampled_from([".md", ".txt", ".toml", ".json", ".csv"]))
def test_normalised_paths_round_trip(segments: list[str], suffix: str) -> None:
    path = "/".join(segments) + suffix
    try:
        checked = check_path(path)
    except StrategyFileError:
        # Refused only for a rule of the pattern (a '.'/'..' segment or the length).
        assert not FILE_PATH.match(path) or len(path) > MAX_PATH_LENGTH
        return
    assert checked == path and check_path(checked) == checked
    assert FILE_PATH.match(checked) and len(checked) <= MAX_PATH_LENGTH


@given(st.text(max_size=300))
def test_nothing_accepted_escapes_the_project(path: str) -> None:
    try:
        checked = check_path(path)
    except StrategyFileError:
        return
    assert FILE_PATH.match(checked) and len(checked) <= MAX_PATH_LENGTH
    segments = checked.split("/")
    assert ".." not in segments and "." not in segments and "" not in segments
    assert not checked.startswith("/") and "\\" not in checked and "\x00" not in checked
    assert not checked.lower().endswith(".py")
    assert posixpath.normpath(checked) == checked and not posixpath.isabs(checked)


@given(st.lists(st.sampled_from(["..", ".", "", "a", "b.md", "/", "\\", "\x00"]), min_size=1, max_size=6))
def test_traversal_shapes_are_refused(parts: list[str]) -> None:
    path = "/".join(parts)
    escapes = any(p in ("..", ".", "") for p in path.split("/")) or "\\" in path or "\x00" in path
    if escapes:
        with pytest.raises(StrategyFileError):
            check_path(path)
