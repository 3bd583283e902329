"""strategy.toml: every problem is a diagnostic naming the file, the line where it has one,
and the reason; plan() gives the StrategyPlan at the defaults or at checked overrides."""

from __future__ import annotations

import json

import pytest

from spine.errors import SpineError
from spine.strategies import ParameterOverrideError, StrategyDocumentError
from spine.strategies.diagnostics import Diagnostic
from spine.strategies.document import check_overrides, header, plan, validate

BASE = """\
[strategy]
name = "Test"
instruments = ["BTCUSDT.SIM"]

[parameters.fast]
type = "integer"
default = 10
min = 2
max = 100

[parameters.level]
type = "decimal"
default = "30"
min = "0"
max = "100"

[features.ema_fast]
kind = "ema"
period = "{fast}"

[rules]
entry_long = { key = "ema_fast.value", op = "CROSSES_ABOVE", ref = "ema_20.value" }
exit_long = { key = "rsi_14.value", op = "GT", value = "{level}" }

[sizing]
quantity = "1"
"""


def errors(text: str, **files: str) -> list[Diagnostic]:
    return [d for d in validate({"strategy.toml": text, **files}) if d.severity == "ERROR"]


def one_error(text: str, *words: str) -> Diagnostic:
    found = errors(text)
    assert len(found) == 1, found
    for word in words:
        assert word in found[0].message, found[0]
    assert found[0].path == "strategy.toml"
    return found[0]


def line_of(text: str, fragment: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if fragment in line)


def test_the_base_document_is_valid_and_plans() -> None:
    assert validate({"strategy.toml": BASE}) == []
    built = plan({"strategy.toml": BASE})
    assert built.name == "Test" and built.instruments == ["BTCUSDT.SIM"] and built.resolution == "1m"
    assert built.channel == "EXTERNAL" and built.direction == "LONG_ONLY" and built.quantity == "1"
    assert built.values == {"fast": "10", "level": "30"}
    # Declared features first, then the default-registry features the rules read.
    assert [(f.feature_id, f.implementation, f.parameters) for f in built.features] == [
        ("ema_fast", "spine_core.features.ema", {"period": "10"}),
        ("ema_20", "spine_core.features.ema", {"period": "20"}),
        ("rsi_14", "spine_core.features.rsi", {"period": "14", "threshold": "70"}),
    ]
    assert json.loads(built.rules["exit_long"]) == {"key": "rsi_14.value", "op": "GT", "value": "30"}
    assert built.rules["exit_long"] == '{"key":"rsi_14.value","op":"GT","value":"30"}'


def test_overrides_are_applied_and_checked() -> None:
    built = plan({"strategy.toml": BASE}, {"fast": "3", "level": "70.5"})
    assert built.features[0].parameters == {"period": "3"} and built.values == {"fast": "3", "level": "70.5"}
    assert json.loads(built.rules["exit_long"])["value"] == "70.5"
    for overrides, words in [
        ({"slow": "5"}, ["unknown parameter 'slow'", "declared: fast, level"]),
        ({"fast": "1"}, ["parameter fast", "out of range", "integer in 2..100"]),
        ({"fast": "101"}, ["out of range", "2..100"]),
        ({"fast": "2.5"}, ["not an exact integer", "2..100"]),
        ({"fast": "010"}, ["not an exact integer"]),
        ({"level": "1e2"}, ["parameter level", "not an exact decimal", "decimal in 0..100"]),
        ({"level": "-0"}, ["not an exact decimal"]),
    ]:
        with pytest.raises(ParameterOverrideError) as caught:
            plan({"strategy.toml": BASE}, overrides)
        assert isinstance(caught.value, SpineError) and isinstance(caught.value, ValueError)
        assert str(caught.value).startswith("INVALID_PARAMETER: ")
        for word in words:
            assert word in str(caught.value), (overrides, str(caught.value))


def test_override_values_that_break_the_document_are_named() -> None:
    text = BASE.replace('quantity = "1"', 'quantity = "{level}"')
    with pytest.raises(StrategyDocumentError) as caught:
        plan({"strategy.toml": text}, {"level": "0"})
    assert "sizing.quantity" in str(caught.value) and "must be > 0" in str(caught.value)
    assert any(d.line == line_of(text, "quantity =") for d in caught.value.diagnostics)


def test_check_overrides_without_overrides_is_the_defaults() -> None:
    built = plan({"strategy.toml": BASE})
    assert check_overrides(built.parameters, None) == {"fast": "10", "level": "30"}


def test_syntax_errors_carry_their_line() -> None:
    text = BASE.replace('name = "Test"', 'name = "Test')
    found = one_error(text, "TOML syntax")
    assert found.line == 2
    found = one_error(BASE + "\n[rules\n", "TOML syntax")
    assert found.line == len(BASE.splitlines()) + 2


def test_floats_are_refused_where_written() -> None:
    text = BASE.replace('quantity = "1"', "quantity = 1.5")
    found = one_error(text, "float", "decimals are strings")
    assert found.line == line_of(text, "quantity =")
    assert one_error(BASE.replace("default = 10", "default = 10.0"), "float").line == line_of(BASE, "default = 10")
    assert one_error(BASE.replace('value = "{level}"', "value = inf"), "float").line == line_of(BASE, "exit_long")


@pytest.mark.parametrize(
    ("old", "new", "words", "anchor"),
    [
        ('name = "Test"', 'name = "Test"\ncolour = "red"', ["unknown key 'colour'", "allowed: name"], "colour"),
        ("[sizing]", "[extras]\nx = 1\n[sizing]", ["unknown table 'extras'", "allowed: strategy"], "[extras]"),
        ("min = 2", "min = 2\nstep = 1", ["unknown key 'step'", "allowed: type, default, min, max"], "step"),
        ('kind = "ema"', 'kind = "kama"', ["unknown feature kind 'kama'", "known:", "ema", "rsi"], 'kind = "kama"'),
        (
            'period = "{fast}"',
            'period = "{fast}"\nwindow = 3',
            ["'window' is not a parameter of ema", "allowed: period"],
            "window",
        ),
        ('period = "{fast}"', 'period = "{slow}"', ["'{slow}' names no declared parameter"], "period"),
        ('type = "integer"', 'type = "int"', ["'int' is not a parameter type"], 'type = "int"'),
        ("default = 10", 'default = "10"', ["must be a TOML integer", "not a string"], 'default = "10"'),
        ("default = 10", "default = 200", ["default 200 is outside min..max = 2..100"], "default = 200"),
        ("min = 2", "min = 200", ["min 200 > max 100"], "[parameters.fast]"),
        ('default = "30"', 'default = "3e1"', ["'3e1' is not an exact decimal"], 'default = "3e1"'),
        ('ref = "ema_20.value"', 'ref = "ema_21.value"', ["unknown row key 'ema_21.value'"], "entry_long"),
        (
            'ref = "ema_20.value"',
            'ref = "ema_fast.val"',
            ["unknown row key 'ema_fast.val'", "ema_fast has: ema_fast.value"],
            "entry_long",
        ),
        ('op = "GT"', 'op = "ABOVE"', ["unknown op 'ABOVE'", "allowed: LT", "CROSSES_BELOW"], "exit_long"),
        (
            'op = "GT", value = "{level}"',
            'op = "GT", value = "{level}", ref = "bar.close"',
            ["exactly one of 'value'"],
            "exit_long",
        ),
        (
            'op = "GT", value = "{level}"',
            'op = "BETWEEN", low = "2", high = "1"',
            ["BETWEEN low 2 > high 1"],
            "exit_long",
        ),
        ('op = "GT", value = "{level}"', 'op = "BETWEEN", low = "2"', ["op BETWEEN needs high"], "exit_long"),
        (
            'op = "GT", value = "{level}"',
            'op = "IS_ABSENT", value = "1"',
            ["unknown key(s) value for op IS_ABSENT"],
            "exit_long",
        ),
        ('value = "{level}"', "value = 30", ["must be a decimal string", "not an integer"], "exit_long"),
        ('value = "{level}"', 'value = "{nope}"', ["'{nope}' names no declared parameter"], "exit_long"),
        ('quantity = "1"', 'quantity = "0"', ["must be > 0"], "quantity"),
        ('quantity = "1"', 'quantity = "-1"', ["must be > 0"], "quantity"),
        ('quantity = "1"', "quantity = 1", ["decimal string", "not an integer"], "quantity"),
        ('quantity = "1"', 'quantity = "1"\n[risk]\nstop_loss = "1"', ["in (0, 1)"], "stop_loss"),
        ('quantity = "1"', 'quantity = "1"\n[risk]\ntake_profit = "0"', ["in (0, 1)"], "take_profit"),
        ('quantity = "1"', 'quantity = "1"\n[risk]\ntrailing = "0.1"', ["unknown key 'trailing'"], "trailing"),
        (
            "entry_long",
            "entry_longer",
            ["unknown key 'entry_longer'", "allowed: entry_long, exit_long, entry_short, exit_short"],
            "entry_longer",
        ),
        ('["BTCUSDT.SIM"]', '["btcusdt"]', ["not a canonical SYMBOL.VENUE id"], "instruments"),
        ('["BTCUSDT.SIM"]', '["BTCUSDT.SIM", "BTCUSDT.SIM"]', ["listed twice"], "instruments"),
        ('["BTCUSDT.SIM"]', '["../../x.SIM"]', ["names no catalog path", "'/'"], "instruments"),
        ('["BTCUSDT.SIM"]', '["a..b.SIM"]', ["names no catalog path", "'..'"], "instruments"),
        ('quantity = "1"', 'quantity = "' + "9" * 40 + '"', ["at most 34028236692093"], "quantity"),
        ('quantity = "1"', 'quantity = "0.' + "0" * 16 + '1"', ["at most 16 decimal places"], "quantity"),
        ('quantity = "1"', 'fraction = "0"', ["fraction of the equity in (0, 1]"], "fraction"),
        ('quantity = "1"', 'fraction = "1.5"', ["fraction of the equity in (0, 1]"], "fraction"),
        ('quantity = "1"', 'notional = "-100"', ["must be > 0 (an amount of the quote currency)"], "notional"),
        ('quantity = "1"', 'notional = "0.' + "0" * 16 + '1"', ["at most 16 decimal places"], "notional"),
        (
            'quantity = "1"',
            'quantity = "1"\nfraction = "0.5"',
            ["[sizing] takes exactly one of quantity, fraction, notional; it gives quantity, fraction"],
            "[sizing]",
        ),
        ('quantity = "1"', 'size = "1"', ["unknown key 'size'", "allowed: quantity, fraction, notional"], "size"),
        ('["BTCUSDT.SIM"]', "[]", ["1..16 instrument ids"], "instruments"),
        ('name = "Test"', 'name = "Test"\nresolution = "2m"', ["'2m' is not one of 1m, 5m"], "resolution"),
        ('name = "Test"', 'name = "Test"\nchannel = "BOTH"', ["'BOTH' is not one of EXTERNAL, INTERNAL"], "channel"),
        ("[features.ema_fast]", "[features.ema_20]", ["'ema_20' is a default-registry feature"], "[features.ema_20]"),
        ("[features.ema_fast]", "[features.bar]", ["not be 'bar'"], "[features.bar]"),
    ],
)
def test_each_refusal_is_named_with_its_line(old: str, new: str, words: list[str], anchor: str) -> None:
    assert old in BASE
    text = BASE.replace(old, new, 1)
    found = errors(text)
    assert found, text
    match = [d for d in found if all(w in d.message for w in words)]
    assert match, found
    assert match[0].line == line_of(text, anchor), (match[0], anchor)


@pytest.mark.parametrize("key", ["quantity", "fraction", "notional"])
def test_each_sizing_takes_a_parameter_and_plans_only_itself(key: str) -> None:
    share = '[parameters.share]\ntype = "decimal"\ndefault = "0.5"\nmin = "0.1"\nmax = "1"\n\n'
    text = BASE.replace("[features.ema_fast]", share + "[features.ema_fast]").replace(
        'quantity = "1"', f'{key} = "{{share}}"'
    )
    built = plan({"strategy.toml": text}, {"share": "0.25"})
    assert (built.quantity, built.fraction, built.notional) == tuple(
        "0.25" if name == key else None for name in ("quantity", "fraction", "notional")
    )


def test_unknown_feature_kind_makes_its_keys_unknown_too() -> None:
    found = errors(BASE.replace('kind = "ema"', 'kind = "kama"'))
    assert any("unknown feature kind" in d.message for d in found)


def test_depth_and_group_size() -> None:
    leaf = '{ key = "bar.close", op = "GT", value = "1" }'
    four = "{ all = [ { any = [ { all = [ " + leaf + " ] } ] } ] }"
    five = "{ all = [ { any = [ { all = [ { any = [ " + leaf + " ] } ] } ] } ] }"
    assert errors(BASE.replace('{ key = "rsi_14.value", op = "GT", value = "{level}" }', four)) == []
    found = one_error(BASE.replace('{ key = "rsi_14.value", op = "GT", value = "{level}" }', five), "nest at most 4")
    assert found.line == line_of(BASE, "exit_long")
    many = "{ any = [" + ", ".join([leaf] * 33) + "] }"
    one_error(BASE.replace('{ key = "rsi_14.value", op = "GT", value = "{level}" }', many), "1..32 conditions")
    one_error(
        BASE.replace('{ key = "rsi_14.value", op = "GT", value = "{level}" }', "{ all = [] }"), "1..32 conditions"
    )


def test_a_rule_table_of_its_own_points_at_its_key() -> None:
    text = (
        BASE.replace('exit_long = { key = "rsi_14.value", op = "GT", value = "{level}" }\n', "")
        + """
[rules.exit_long]
any = [
  { key = "bar.close", op = "LT", value = "1" },
  { key = "bar.closing", op = "LT", value = "1" },
]
"""
    )
    found = one_error(text, "unknown row key 'bar.closing'")
    assert found.line == line_of(text, "any = [")


def test_missing_sections_and_entry_rule() -> None:
    one_error(BASE.replace('[sizing]\nquantity = "1"\n', ""), "missing [sizing]")
    found = one_error(BASE.replace("entry_long", "exit_short"), "no entry rule", "entry_long")
    assert found.line == line_of(BASE, "[rules]")
    warnings = [
        d for d in validate({"strategy.toml": BASE.replace("exit_long", "exit_short")}) if d.severity == "WARNING"
    ]
    assert any("exit_short: never used" in d.message for d in warnings)
    assert any("no exit_long" in d.message for d in warnings)


def test_instruments_are_checked_when_a_lookup_is_given() -> None:
    text = BASE.replace('["BTCUSDT.SIM"]', '["BTCUSDT.SIM", "NOPE.SIM"]')
    found = [d for d in validate({"strategy.toml": text}, lambda i: i == "BTCUSDT.SIM") if d.severity == "ERROR"]
    assert len(found) == 1 and "unknown instrument 'NOPE.SIM'" in found[0].message
    assert found[0].line == line_of(text, "instruments")
    assert validate({"strategy.toml": text}, lambda i: True) == []


def test_other_files_must_parse_and_bad_files_are_named() -> None:
    found = errors(BASE, **{"notes/params.json": '{"a": 1,\n}', "more.toml": "x = \n"})
    assert {(d.path, d.line) for d in found} == {("notes/params.json", 2), ("more.toml", 1)}
    found = validate({"strategy.toml": BASE, "helper.py": "import os", "../x.md": ""})
    assert [(d.path, d.line) for d in found] == [("helper.py", None), ("strategy.toml", None)]
    assert "Python strategy modules are not accepted" in found[0].message
    assert "'../x.md' has a '..' segment" in found[1].message  # a malformed path is not a file_path
    found = validate({"notes.md": "x"})
    assert [d.message for d in found] == ["no strategy.toml: every revision holds the strategy document strategy.toml"]


def test_plan_refuses_an_invalid_revision_with_every_diagnostic() -> None:
    text = BASE.replace('kind = "ema"', 'kind = "kama"').replace('quantity = "1"', "quantity = 0.5")
    with pytest.raises(StrategyDocumentError) as caught:
        plan({"strategy.toml": text})
    error = caught.value
    assert isinstance(error, SpineError) and isinstance(error, ValueError)
    assert str(error).startswith("INVALID_STRATEGY: ") and "kama" in str(error) and "float" in str(error)
    assert len([d for d in error.diagnostics if d.severity == "ERROR"]) >= 2


def test_feature_parameters_may_be_integers_and_need_every_required_name() -> None:
    text = BASE.replace('period = "{fast}"', "period = 12")
    assert plan({"strategy.toml": text}).features[0].parameters == {"period": "12"}
    one_error(BASE.replace('period = "{fast}"', ""), "kind ema needs period")
    one_error(BASE.replace('period = "{fast}"', "period = 1.5"), "float")
    one_error(BASE.replace('period = "{fast}"', 'period = "ten"'), "neither a decimal nor")


def test_header_reads_what_parses() -> None:
    assert header({"strategy.toml": BASE}).instruments == ["BTCUSDT.SIM"]
    assert header({"strategy.toml": BASE}).name == "Test"
    assert header({"strategy.toml": "[strategy"}).instruments == []
    assert header({}).instruments == []


def test_range_ends_that_make_no_plan_are_warnings() -> None:
    text = BASE.replace('quantity = "1"', 'quantity = "{level}"')
    found = validate({"strategy.toml": text})
    assert [d.severity for d in found] == ["WARNING"]
    assert found[0].message.startswith("with every parameter at its min: sizing.quantity")
    assert found[0].line == line_of(text, "quantity =")


def test_document_caps() -> None:
    many = "".join(f'\n[features.f{i}]\nkind = "sma"\nperiod = 5\n' for i in range(33))
    assert one_error(BASE + many, "34 features; at most 32").line == line_of(BASE, "[features.ema_fast]")
    params = "".join(f'\n[parameters.p{i}]\ntype = "integer"\ndefault = 1\nmin = 1\nmax = 2\n' for i in range(31))
    one_error(BASE + params, "33 parameters; at most 32")
    ids = ", ".join(f'"I{i}.SIM"' for i in range(17))
    one_error(BASE.replace('["BTCUSDT.SIM"]', f"[{ids}]"), "1..16 instrument ids")
