"""Promote's rewrite of a revision's defaults: only the default lines change, the result plans
to exactly the values, and what it cannot place is refused, never guessed."""

from __future__ import annotations

import difflib

import pytest

from spine.strategies import document
from spine.strategies.templates import template_files
from spine.studies.promote import PromoteError, with_defaults


@pytest.mark.parametrize("template", ["ema_cross", "rsi_mean_reversion", "bollinger_reversion", "donchian_breakout"])
def test_only_the_default_lines_change_and_the_plan_reads_the_values(template: str) -> None:
    files = template_files(template)
    declared = document.plan(files).parameters
    # Each parameter at its maximum: a value no template has as its default.
    values = {p.name: p.max for p in declared}
    out = with_defaults(files, values)
    assert document.plan(out).values == values
    changed = [
        line
        for line in difflib.ndiff(files["strategy.toml"].splitlines(), out["strategy.toml"].splitlines())
        if line[:2] in ("- ", "+ ")
    ]
    assert all(line[2:].startswith("default = ") for line in changed), changed
    assert len(changed) == 2 * sum(1 for p in declared if p.default != p.max)


def test_line_endings_and_comments_stay() -> None:
    files = {"strategy.toml": template_files("ema_cross")["strategy.toml"].replace("\n", "\r\n")}
    text = files["strategy.toml"].replace("default = 10\r\n", "default = 10  # fast period\r\n")
    out = with_defaults({"strategy.toml": text}, {"fast": "12"})["strategy.toml"]
    assert "default = 12  # fast period\r\n" in out and out.count("\r\n") == text.count("\r\n")


def test_a_default_it_cannot_place_is_refused() -> None:
    text = template_files("ema_cross")["strategy.toml"]
    inline = text.replace(
        '[parameters.fast]\ntype = "integer"\ndefault = 10\nmin = 2\nmax = 100\n'
        'description = "Period of the fast EMA, in bars."\n',
        '[parameters]\nfast = { type = "integer", default = 10, min = 2, max = 100 }\n',
    )
    assert inline != text and document.plan({"strategy.toml": inline}).values["fast"] == "10"
    with pytest.raises(PromoteError, match="no one-line default of parameter fast"):
        with_defaults({"strategy.toml": inline}, {"fast": "12"})


def test_a_value_its_declaration_refuses_is_refused() -> None:
    with pytest.raises(PromoteError, match="does not plan"):
        with_defaults(template_files("ema_cross"), {"fast": "1000"})
