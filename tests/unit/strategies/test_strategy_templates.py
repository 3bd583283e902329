"""The templates: complete declarative strategies that validate with no ERROR, plan at their
defaults and across their parameter ranges, and serve as schema-valid svc.strategy_template."""

from __future__ import annotations

import tomllib
from decimal import Decimal

import pytest
from strategy_schemas import schema_errors

from spine.features import FeatureState
from spine.strategies import StrategyPlan
from spine.strategies.document import plan, validate
from spine.strategies.templates import TEMPLATE_IDS, template_document, template_documents, template_files


def test_at_least_the_four_named_templates() -> None:
    assert {"ema_cross", "rsi_mean_reversion", "donchian_breakout", "bollinger_reversion"} <= set(TEMPLATE_IDS)
    assert [d["template_id"] for d in template_documents()] == list(TEMPLATE_IDS)


@pytest.mark.parametrize("template_id", TEMPLATE_IDS)
def test_each_template_validates_plans_and_serves(template_id: str) -> None:
    files = template_files(template_id)
    assert [d for d in validate(files) if d.severity == "ERROR"] == []
    assert validate(files) == []  # no warnings either
    built = plan(files)
    assert isinstance(built, StrategyPlan) and built.template_id == template_id
    assert built.instruments == ["BTCUSDT.SIM"] and built.resolution == "1m" and built.channel == "EXTERNAL"
    assert built.direction == "LONG_ONLY" and "entry_long" in built.rules and "exit_long" in built.rules
    assert built.parameters, "a study needs parameters to search"
    document = template_document(template_id)
    assert schema_errors("svc.strategy_template", document) == []
    assert document["files"] == [{"path": "strategy.toml", "content": files["strategy.toml"]}]


@pytest.mark.parametrize("template_id", TEMPLATE_IDS)
def test_each_template_plans_at_the_ends_of_its_ranges(template_id: str) -> None:
    files = template_files(template_id)
    parameters = plan(files).parameters
    for end in ("min", "max"):
        built = plan(files, {p.name: getattr(p, end) for p in parameters})
        assert built.values == {p.name: getattr(p, end) for p in parameters}


def test_ema_cross_parameters_and_rules() -> None:
    built = plan(template_files("ema_cross"))
    assert [(p.name, p.type, p.default, p.min, p.max) for p in built.parameters] == [
        ("fast", "integer", "10", "2", "100"),
        ("slow", "integer", "30", "5", "400"),
        ("quantity", "decimal", "0.1", "0.001", "1000000"),
    ]
    assert [f.parameters for f in built.features] == [{"period": "10"}, {"period": "30"}]
    assert built.quantity == "0.1"

    assert built.rules == {
        "entry_long": '{"key":"ema_fast.value","op":"CROSSES_ABOVE","ref":"ema_slow.value"}',
        "exit_long": '{"key":"ema_fast.value","op":"CROSSES_BELOW","ref":"ema_slow.value"}',
    }


@pytest.mark.parametrize("template", ["ema_cross", "rsi_mean_reversion", "donchian_breakout", "bollinger_reversion"])
def test_each_template_sizes_by_a_quantity_parameter(template: str) -> None:
    """A backtest sets the size for the instrument at hand: whole shares for an equity."""
    assert plan(template_files(template), {"quantity": "10"}).quantity == "10"


def test_rsi_thresholds_are_on_the_rsi_scale() -> None:
    """RSI values run 0..100 (rsi_14.value at scale 4), so the thresholds are 0..100 too."""
    built = plan(template_files("rsi_mean_reversion"), {"lower": "25", "upper": "75.5"})
    assert built.rules["entry_long"] == '{"key":"rsi.value","op":"LT","value":"25"}'
    assert built.rules["exit_long"] == '{"key":"rsi.value","op":"GT","value":"75.5"}'
    ranges = {p.name: (p.min, p.max) for p in built.parameters}
    assert ranges["lower"] == ("5", "50") and ranges["upper"] == ("50", "95")
    assert built.stop_loss == "0.03"


def test_template_ids_match_their_documents() -> None:
    for template_id in TEMPLATE_IDS:
        assert tomllib.loads(template_files(template_id)["strategy.toml"])["strategy"]["template"] == template_id


def test_an_unknown_template_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        template_document("nope")


def test_rsi_values_run_from_0_to_100() -> None:
    """The scale the RSI thresholds are written on: the kernel's rsi value is 0..100."""
    state = FeatureState(price_scale=2, size_scale=0, feature_ids=["rsi_14"])
    seen = []
    for i in range(60):
        close = 10_000 + (i * 37) % 250 - (i % 7) * 30
        state.update((i + 1) * 60_000_000_000, close, close + 10, close - 10, close, 5)
        value = state.row()["rsi_14.value"]
        if value.get("value") is not None:
            seen.append(Decimal(str(value["value"])))
    assert seen and all(0 <= v <= 100 for v in seen) and max(seen) > 1
