"""User files nested past the bound (``spine.strategies.nesting.MAX_NESTING``) are refused by
name and line wherever they are read: validation, a run's plan, the revision header and the
save's file check; never a RecursionError. Brackets inside strings and comments are text."""

from __future__ import annotations

import sys

import pytest

from spine.strategies import StrategyDocumentError
from spine.strategies.document import header, plan, validate
from spine.strategies.errors import StrategyFileError
from spine.strategies.nesting import MAX_NESTING, nesting_problem
from spine.strategies.paths import check_files

BASE = """\
[strategy]
name = "Test"
instruments = ["BTCUSDT.SIM"]

[rules]
entry_long = { key = "bar.close", op = "GT", value = "1" }
exit_long = { key = "bar.close", op = "LT", value = "1" }

[sizing]
quantity = "1"
"""
DEEP = 500


def deep_toml(depth: int, opener: str = "[") -> str:
    """``a`` on line 3 holding ``depth`` arrays (or inline tables) one inside another."""
    if opener == "{":
        return "\n\na = " + "{ y = " * depth + "1" + " }" * depth + "\n"
    return "\n\na = " + "[" * depth + "1" + "]" * depth + "\n"


@pytest.mark.parametrize("opener", ["[", "{"])
def test_a_deep_toml_note_is_an_error_naming_file_line_and_bound(opener: str) -> None:
    found = [
        d
        for d in validate({"strategy.toml": BASE, "notes/deep.toml": deep_toml(DEEP, opener)})
        if d.severity == "ERROR"
    ]
    assert [(d.path, d.line) for d in found] == [("notes/deep.toml", 3)], found
    assert f"at most {MAX_NESTING}" in found[0].message


def test_a_deep_json_note_and_a_deep_entry_are_errors() -> None:
    deep_json = '{"a":\n' + "[" * 5000 + "]" * 5000 + "}"
    found = [d for d in validate({"strategy.toml": BASE, "data.json": deep_json}) if d.severity == "ERROR"]
    assert [(d.path, d.line) for d in found] == [("data.json", 2)]
    entry = BASE + "[notes]\nx = " + "[" * DEEP + "]" * DEEP + "\n"
    found = [d for d in validate({"strategy.toml": entry}) if d.severity == "ERROR"]
    assert [d.path for d in found] == ["strategy.toml"] and f"at most {MAX_NESTING}" in found[0].message
    with pytest.raises(StrategyDocumentError) as refused:
        plan({"strategy.toml": entry})
    assert f"at most {MAX_NESTING}" in str(refused.value)
    assert header({"strategy.toml": entry}).instruments == []


def test_deep_dotted_keys_are_bounded_too() -> None:
    """Tables nest through dotted keys and headers as well as brackets."""
    entry = BASE + "[" + ".".join(["t"] * (sys.getrecursionlimit() + 10)) + "]\nx = 1\n"
    found = [d for d in validate({"strategy.toml": entry}) if d.severity == "ERROR"]
    assert len(found) == 1 and f"at most {MAX_NESTING}" in found[0].message, found


def test_the_save_check_refuses_a_deep_file_by_name() -> None:
    with pytest.raises(StrategyFileError) as refused:
        check_files({"strategy.toml": BASE, "notes/deep.toml": deep_toml(DEEP)})
    assert "'notes/deep.toml' line 3" in str(refused.value) and f"at most {MAX_NESTING}" in str(refused.value)
    check_files({"strategy.toml": BASE, "notes/ok.toml": deep_toml(MAX_NESTING - 1)})


def test_brackets_in_strings_and_comments_are_not_nesting() -> None:
    many = "[" * (MAX_NESTING * 3)
    toml = f'a = "{many}"\nb = \'{many}\'\nc = """\n{many}\n"""\nd = \'\'\'{many}\'\'\'\n# {many}\ne = "\\"{many}"\n'
    assert nesting_problem("x.toml", toml) is None
    assert validate({"strategy.toml": BASE, "x.toml": toml}) == []
    assert nesting_problem("x.json", '{"a": "\\"' + many + '"}') is None
    assert nesting_problem("x.md", many) is None  # notes and CSV are free text
    assert nesting_problem("x.toml", deep_toml(MAX_NESTING)) is None
    assert nesting_problem("x.toml", deep_toml(MAX_NESTING + 1)) is not None


@pytest.mark.parametrize(
    "path, text",
    [
        ("x.toml", '"""' + '\\"' * 120_000),  # an unterminated multi-line string full of escapes
        ("x.toml", '"' + '\\"' * 120_000),
        ("x.toml", "'''" + "''x" * 80_000),
        ("x.json", '"' + '\\"' * 120_000),
        ("x.toml", "a = [" + '"\\"' * 80_000),
    ],
)
def test_the_scan_is_linear_on_unterminated_strings(path: str, text: str) -> None:
    """Each character is looked at a bounded number of times: a file of 256 KiB built to make a
    backtracking scanner retry at every position is read in one pass (a few ms, not minutes;
    counted, not timed)."""
    from spine.strategies import nesting

    assert nesting.scanned(path, text) == len(text)
    assert nesting_problem(path, text) is None
