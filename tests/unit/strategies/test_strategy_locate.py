"""The line locator: the key's line inside its table, else the nearest enclosing table or key,
else None; and the line of a tomllib syntax error."""

from __future__ import annotations

import tomllib

import pytest

from spine.strategies.locate import locate, syntax_line

TEXT = """\
top = 1
[strategy]
name = "x"   # a comment
"quoted" = 2

[parameters.fast]
type = "integer"

[ features . slow ]
kind = "ema"

[rules]
entry_long = { all = [{ key = "bar.close", op = "GT", value = "1" }] }

[rules.exit_long]
any = [
  { key = "bar.close", op = "LT", value = "1" },
]
"""


@pytest.mark.parametrize(
    ("path", "line"),
    [
        (("top",), 1),
        (("strategy",), 2),
        (("strategy", "name"), 3),
        (("strategy", "quoted"), 4),
        (("strategy", "missing"), 2),
        (("parameters", "fast", "type"), 7),
        (("parameters", "fast"), 6),
        (("parameters", "fast", "default"), 6),
        (("features", "slow", "kind"), 10),
        (("rules", "entry_long", "all", 0, "key"), 13),
        (("rules", "exit_long", "any", 0, "op"), 16),
        (("rules", "exit_long"), 15),
        (("parameters",), 6),
        (("features",), 9),
        (("nowhere", "at_all"), None),
        ((), None),
    ],
)
def test_locate(path: tuple[str | int, ...], line: int | None) -> None:
    assert locate(TEXT, path) == line


def test_syntax_line_reads_tomllib_messages() -> None:
    with pytest.raises(tomllib.TOMLDecodeError) as caught:
        tomllib.loads("a = 1\nb = = 2\n")
    assert syntax_line(str(caught.value)) == 2
    assert syntax_line("no position") is None
