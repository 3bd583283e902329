"""File paths and file sets of a strategy project: what a revision may hold.

A path is accepted exactly as sent or refused; it is never rewritten (no ``./`` stripping, no
case folding, no slash collapsing), so the path a client saves is the path it reads back and
two spellings never name one file. Refusals name the path and the rule it breaks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from spine.strategies.errors import StrategyFileError
from spine.strategies.nesting import nesting_problem

__all__ = [
    "ENTRY",
    "MAX_PATH_LENGTH",
    "MAX_FILES",
    "MAX_FILE_BYTES",
    "MAX_TOTAL_BYTES",
    "ALLOWED_SUFFIXES",
    "check_path",
    "check_files",
    "file_problems",
]

#: The entry file every revision holds: the declarative strategy document.
ENTRY = "strategy.toml"
#: A path's length in characters (the schemas' ``file_path`` maxLength; paths are ASCII).
MAX_PATH_LENGTH = 256
#: Files per revision.
MAX_FILES = 64
#: One file's content, in UTF-8 bytes (256 KiB).
MAX_FILE_BYTES = 256 * 1024
#: A revision's files together, in UTF-8 bytes (1 MiB; the schemas' content maxLength).
MAX_TOTAL_BYTES = 1024 * 1024
#: The kinds of file a project may hold besides the entry: notes and data, never code.
ALLOWED_SUFFIXES = (".md", ".txt", ".toml", ".json", ".csv")

#: The schemas' ``file_path`` pattern.
_PATTERN = re.compile(r"^(?!.*(^|/)\.\.?(/|$))[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$")
_SEGMENT = re.compile(r"^[A-Za-z0-9_.-]+$")
_PYTHON = "Python strategy modules are not accepted: strategies are declarative (strategy.toml)"


def _path_problem(path: object) -> str | None:
    """Why ``path`` is refused, or None."""
    if not isinstance(path, str):
        return f"a path is a string, not {type(path).__name__}"
    shown = repr(path[: MAX_PATH_LENGTH + 8])
    if path == "":
        return "the path is empty"
    if "\x00" in path:
        return f"path {shown} holds a NUL character"
    if "\\" in path:
        return f"path {shown} holds a backslash: separate segments with '/'"
    if len(path) > MAX_PATH_LENGTH:
        return f"path {shown} is {len(path)} characters long; at most {MAX_PATH_LENGTH}"
    if path.startswith("/"):
        return f"path {shown} is absolute: paths are relative to the project"
    for segment in path.split("/"):
        if segment == "":
            return f"path {shown} has an empty segment ('//' or a trailing '/')"
        if segment in (".", ".."):
            return f"path {shown} has a {segment!r} segment: paths may not step out of or around the project"
        if not _SEGMENT.match(segment):
            return f"path {shown}: segment {segment!r} may hold only A-Z a-z 0-9 '_' '.' '-'"
    if not _PATTERN.match(path):  # pragma: no cover - the rules above are the pattern, spelt out
        return f"path {shown} does not match the file_path pattern"
    name = path.rsplit("/", 1)[-1]
    if name.lower().endswith((".py", ".pyc", ".pyw", ".pyi")):
        return f"path {shown}: {_PYTHON}"
    if path != ENTRY and not name.lower().endswith(ALLOWED_SUFFIXES):
        allowed = ", ".join("*" + s for s in ALLOWED_SUFFIXES)
        return f"path {shown}: a project holds {ENTRY} and notes or data files ({allowed})"
    return None


def check_path(path: str) -> str:
    """The path, checked: relative, '/'-separated, at most :data:`MAX_PATH_LENGTH`
    characters, no '.' or '..' segment, no empty segment, no NUL or backslash, of a kind a
    project may hold.

    # Errors
    :class:`StrategyFileError` naming the path and the rule it breaks.
    """
    problem = _path_problem(path)
    if problem is not None:
        raise StrategyFileError(problem, path=path if isinstance(path, str) else None)
    return path


def file_problems(files: Mapping[str, str]) -> list[tuple[str | None, str]]:
    """Every problem of a revision's file set, as ``(path, reason)`` (path None when the
    problem is the set's, or the path itself is malformed): bad paths,
    content that is not text or not UTF-8, a file over :data:`MAX_FILE_BYTES`, more than
    :data:`MAX_FILES` files, more than :data:`MAX_TOTAL_BYTES` in all, no :data:`ENTRY`."""
    problems: list[tuple[str | None, str]] = []
    if len(files) > MAX_FILES:
        problems.append((None, f"{len(files)} files; a revision holds at most {MAX_FILES}"))
    total = 0
    for path, content in files.items():
        problem = _path_problem(path)
        if problem is not None:
            # A well-formed path of a refused kind (``x.py``) is named as the file's own problem.
            named = isinstance(path, str) and len(path) <= MAX_PATH_LENGTH and bool(_PATTERN.match(path))
            problems.append((path if named else None, problem))
            continue
        if not isinstance(content, str):
            problems.append((path, f"file {path!r}: content is text, not {type(content).__name__}"))
            continue
        try:
            size = len(content.encode("utf-8"))
        except UnicodeEncodeError:
            problems.append((path, f"file {path!r}: content is not valid UTF-8 (a lone surrogate)"))
            continue
        total += size
        if size > MAX_FILE_BYTES:
            problems.append(
                (path, f"file {path!r} is {size} bytes; a file holds at most {MAX_FILE_BYTES} bytes (256 KiB)")
            )
    if total > MAX_TOTAL_BYTES:
        problems.append(
            (None, f"the files hold {total} bytes; a revision holds at most {MAX_TOTAL_BYTES} bytes (1 MiB)")
        )
    if ENTRY not in files:
        problems.append((None, f"no {ENTRY}: every revision holds the strategy document {ENTRY}"))
    return problems


def check_files(files: Mapping[str, str]) -> None:
    """Check a revision's whole file set (see :func:`file_problems`), and that no TOML or
    JSON file nests past :data:`spine.strategies.nesting.MAX_NESTING`.

    # Errors
    :class:`StrategyFileError` naming every problem, its ``path`` the first bad file's.
    """
    problems = file_problems(files)
    for path, content in sorted(files.items()):
        deep = nesting_problem(path, content) if isinstance(path, str) and isinstance(content, str) else None
        if deep is not None:
            problems.append((path, f"file {path!r} line {deep[0]}: {deep[1]}"))
    if problems:
        first = next((p for p, _ in problems if p is not None), None)
        raise StrategyFileError("; ".join(reason for _, reason in problems), path=first)
