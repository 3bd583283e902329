"""``spine._core.StrategyKernel``: bit for bit against a plain-Python reference that feeds the
same bars to a ``FeatureState`` of the same registry features and evaluates the same conditions
with ``decimal.Decimal`` over ``FeatureState.row()`` (crosses and key-vs-key included); and
every refusal, a ``StrategyRuleError`` (also a ``ValueError``) naming the feature and parameter
or the rule and JSON path."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spine import FeatureError, SpineError, StrategyKernel, StrategyRuleError, feature_specs
from spine._core import FeatureState, feature_kinds
from spine._core import StrategyRuleError as CoreStrategyRuleError

PRICE_SCALE, SIZE_SCALE = 2, 1
MINUTE = 60_000_000_000
BAR_KEYS = ("bar.open", "bar.high", "bar.low", "bar.close", "bar.volume")
SPECS = {s["feature_id"]: s for s in feature_specs()}
#: Declared in every property run (as the registry declares them), so a FeatureState of the same
#: ids is the reference; roc_10 is read by key only (the kernel adds registry features rules read).
DECLARED = ("ema_20", "sma_20", "rsi_14", "bb_20_2", "donchian_20")
READ_ONLY = "roc_10"
CMP = ("LT", "LE", "GT", "GE", "EQ", "NE")

Values = dict[str, Decimal | None]
Condition = dict[str, Any]


def declared(ids: tuple[str, ...] = DECLARED) -> list[tuple[str, str, dict[str, str]]]:
    return [(i, SPECS[i]["implementation"], dict(SPECS[i]["parameters"])) for i in ids]


def keys_of(ids: tuple[str, ...]) -> list[str]:
    return [f"{i}.{o['name']}" for i in ids for o in SPECS[i]["outputs"]]


ALL_KEYS = [*BAR_KEYS, *keys_of(DECLARED), *keys_of((READ_ONLY,))]
#: Keys on the price level, so a random pair of them crosses now and then.
PRICE_LEVEL = [
    k
    for k in ALL_KEYS
    if k != "bar.volume" and k.split(".")[0] not in ("rsi_14", "roc_10") and not k.endswith(".percent_b")
]


# the reference


def row_values(state: FeatureState, bar: tuple[int, ...]) -> Values:
    """The bar's values and the state's row as exact decimals (None: ABSENT)."""
    values: Values = {
        k: Decimal(m).scaleb(-(SIZE_SCALE if k == "bar.volume" else PRICE_SCALE))
        for k, m in zip(BAR_KEYS, bar[1:], strict=True)
    }
    for key, value in state.row().items():
        values[key] = None if value["kind"] == "ABSENT" else Decimal(str(value["value"]))
    return values


def holds(c: Condition, now: Values, prev: Values | None) -> bool:
    """The condition on plain decimals, straight from the grammar's definition."""
    if "all" in c:
        return all(holds(m, now, prev) for m in c["all"])
    if "any" in c:
        return any(holds(m, now, prev) for m in c["any"])
    op, a = c["op"], now[c["key"]]
    if op in ("IS_ABSENT", "IS_NOT_ABSENT"):
        return bool((a is None) == (op == "IS_ABSENT"))
    if op == "BETWEEN":
        return a is not None and Decimal(c["low"]) <= a <= Decimal(c["high"])

    def other(values: Values) -> Decimal | None:
        return values[c["ref"]] if "ref" in c else Decimal(c["value"])

    b = other(now)
    if op in CMP:
        if a is None or b is None:
            return False
        return {"LT": a < b, "LE": a <= b, "GT": a > b, "GE": a >= b, "EQ": a == b, "NE": a != b}[op]
    if prev is None:
        return False
    pa, pb = prev[c["key"]], other(prev)
    if None in (a, b, pa, pb):
        return False
    assert a is not None and b is not None and pa is not None and pb is not None
    if op == "CROSSES_ABOVE":
        return pa <= pb and a > b
    return pa >= pb and a < b


def text(key: str, value: Decimal | None) -> str | None:
    """A value as the kernel writes it: a decimal at the key's scale (bar keys) or the row's."""
    if value is None:
        return None
    if key.startswith("bar."):
        return f"{value:.{SIZE_SCALE if key == 'bar.volume' else PRICE_SCALE}f}"
    return str(value)


# generated bars and conditions


@st.composite
def bars(draw: st.DrawFn) -> list[tuple[int, ...]]:
    """A random walk of consistent bars around 100.00, strictly increasing ts_event."""
    n = draw(st.one_of(st.integers(1, 10), st.integers(21, 70)))
    close, ts = 10_000, 0
    out: list[tuple[int, ...]] = []
    for _ in range(n):
        ts += MINUTE * draw(st.integers(1, 3))
        open_ = close
        close = max(1, close + draw(st.integers(-150, 150)))
        high = max(open_, close) + draw(st.integers(0, 40))
        low = max(0, min(open_, close) - draw(st.integers(0, 40)))
        out.append((ts, open_, high, low, close, draw(st.integers(0, 5000))))
    return out


def literal_range(key: str) -> tuple[int, int]:
    if key == "bar.volume":
        return (0, 500)
    if key.endswith(".percent_b"):
        return (-1, 2)
    if key.startswith(("rsi_14.", "roc_10.")):
        return (-10, 100)
    return (95, 105)


@st.composite
def literal(draw: st.DrawFn, key: str) -> str:
    """A decimal string near the key's values, with any number of fractional digits (finer than
    the key's scale too)."""
    lo, hi = literal_range(key)
    places = draw(st.integers(0, 10))
    d = draw(st.decimals(lo, hi, places=places, allow_nan=False, allow_infinity=False))
    return "0" if d == 0 else format(d, "f")


@st.composite
def leaves(draw: st.DrawFn) -> Condition:
    kind = draw(st.sampled_from(("value", "ref", "between", "absent", "cross_value", "cross_ref")))
    key = draw(st.sampled_from(PRICE_LEVEL if kind.startswith("cross") and draw(st.booleans()) else ALL_KEYS))
    if kind == "absent":
        return {"key": key, "op": draw(st.sampled_from(("IS_ABSENT", "IS_NOT_ABSENT")))}
    if kind == "between":
        low, high = sorted((draw(literal(key)), draw(literal(key))), key=Decimal)
        return {"key": key, "op": "BETWEEN", "low": low, "high": high}
    op = draw(st.sampled_from(("CROSSES_ABOVE", "CROSSES_BELOW") if kind.startswith("cross") else CMP))
    if kind.endswith("ref"):
        return {"key": key, "op": op, "ref": draw(st.sampled_from(PRICE_LEVEL if key in PRICE_LEVEL else ALL_KEYS))}
    return {"key": key, "op": op, "value": draw(literal(key))}


def conditions() -> st.SearchStrategy[Condition]:
    """Trees of depth at most 4 (the condition itself counts 1)."""
    return st.recursive(
        leaves(),
        lambda inner: st.one_of(
            st.builds(lambda m: {"all": m}, st.lists(inner, min_size=1, max_size=3)),
            st.builds(lambda m: {"any": m}, st.lists(inner, min_size=1, max_size=3)),
        ),
        max_leaves=6,
    ).filter(lambda c: depth(c) <= 4)


def depth(c: Condition) -> int:
    members = c.get("all") or c.get("any")
    return 1 + max(map(depth, members)) if members else 1


def kernel_and_state(rules: list[Condition]) -> tuple[StrategyKernel, FeatureState]:
    """A kernel over the declared features and ``rules`` (``r0``, ``r1``, ...), and a feature
    state computing the same features for the reference."""
    kernel = StrategyKernel(
        features=declared(),
        rules=[(f"r{i}", json.dumps(c)) for i, c in enumerate(rules)],
        price_scale=PRICE_SCALE,
        size_scale=SIZE_SCALE,
    )
    state = FeatureState(price_scale=PRICE_SCALE, size_scale=SIZE_SCALE, feature_ids=[*DECLARED, READ_ONLY])
    return kernel, state


# properties


@given(bars(), st.lists(conditions(), min_size=1, max_size=6), st.integers(-1, 70))
def test_rules_fire_as_the_reference_says(series: list[tuple[int, ...]], rules: list[Condition], gap_at: int) -> None:
    kernel, state = kernel_and_state(rules)
    prev: Values | None = None
    for i, bar in enumerate(series):
        if i == gap_at:
            kernel.mark_gap()
            state.mark_gap()
            prev = None
        fired = kernel.update(*bar)
        state.update(*bar)
        now = row_values(state, bar)
        expected = sum(1 << r for r, c in enumerate(rules) if holds(c, now, prev))
        assert fired == expected, f"bar {i}: {fired:b} != {expected:b}"
        for key in kernel.keys:
            assert kernel.value(key) == text(key, now[key]), key
        prev = now


@given(bars(), st.sampled_from(PRICE_LEVEL), st.sampled_from(PRICE_LEVEL), st.integers(0, 69), st.integers(-9, 9))
def test_crosses_on_the_price_level_match_the_reference(
    series: list[tuple[int, ...]], a: str, b: str, at: int, offset: int
) -> None:
    # A level the series passes: one of its closes, moved by less than a grid step or not at all.
    level = format(Decimal(series[at % len(series)][4]).scaleb(-PRICE_SCALE) + Decimal(offset).scaleb(-3), "f")
    rules = [
        {"key": a, "op": "CROSSES_ABOVE", "ref": b},
        {"key": a, "op": "CROSSES_BELOW", "ref": b},
        {"key": a, "op": "CROSSES_ABOVE", "value": level},
        {"key": a, "op": "CROSSES_BELOW", "value": level},
    ]
    kernel, state = kernel_and_state(rules)
    prev: Values | None = None
    for bar in series:
        fired = kernel.update(*bar)
        state.update(*bar)
        now = row_values(state, bar)
        assert fired == sum(1 << r for r, c in enumerate(rules) if holds(c, now, prev))
        prev = now


def test_an_ema_cross_fires_on_the_bar_it_crosses() -> None:
    closes = [10_000] * 25 + [10_500] * 3 + [9_000] * 3
    kernel = StrategyKernel(
        features=declared(("ema_20", "sma_20")),
        rules=[
            ("entry_long", json.dumps({"key": "ema_20.value", "op": "CROSSES_ABOVE", "ref": "sma_20.value"})),
            ("exit_long", json.dumps({"key": "ema_20.value", "op": "CROSSES_BELOW", "ref": "sma_20.value"})),
        ],
        price_scale=PRICE_SCALE,
        size_scale=SIZE_SCALE,
    )
    answers = [kernel.update((i + 1) * MINUTE, c, c, c, c, 10) for i, c in enumerate(closes)]
    assert answers.index(0b01) == 25 and answers.index(0b10) == 28
    assert sum(a != 0 for a in answers) == 2


def test_keys_and_values_before_and_after_a_bar() -> None:
    kernel = StrategyKernel(
        features=declared(("bb_20_2",)),
        rules=[("r", json.dumps({"key": "rsi_14.value", "op": "GT", "value": "70"}))],
        price_scale=PRICE_SCALE,
        size_scale=SIZE_SCALE,
    )
    assert kernel.keys == [*BAR_KEYS, *keys_of(("bb_20_2", "rsi_14"))]
    assert all(kernel.value(k) is None for k in kernel.keys)
    assert kernel.update(MINUTE, 100, 120, 90, 110, 7) == 0
    assert [kernel.value(k) for k in BAR_KEYS] == ["1.00", "1.20", "0.90", "1.10", "0.7"]
    assert kernel.value("bb_20_2.mid") is None


def test_feature_kinds_cover_the_registry() -> None:
    kinds = {k["implementation"]: k for k in feature_kinds()}
    assert kinds["spine_core.features.ema"] == {
        "kind": "ema",
        "implementation": "spine_core.features.ema",
        "parameters": ["period"],
        "optional": ["threshold"],
    }
    for spec in SPECS.values():
        kind = kinds[spec["implementation"]]
        assert set(spec["parameters"]) - {"threshold"} == set(kind["parameters"])
        assert spec["implementation"] == "spine_core.features." + kind["kind"]


# refusals

EMA = ("spine_core.features.ema", {"period": "3"})
LEAF: Condition = {"key": "bar.close", "op": "GT", "value": "1"}


def nest(levels: int) -> Condition:
    c: Condition = {"key": "bar.close", "op": "IS_ABSENT"}
    for _ in range(levels):
        c = {"all": [c]}
    return c


FEATURE_REFUSALS: list[tuple[list[tuple[str, str, dict[str, str]]], str]] = [
    ([("bar", *EMA)], 'feature "bar": the id "bar" is reserved'),
    ([("f", *EMA), ("f", "spine_core.features.sma", {"period": "3"})], 'feature "f": declared twice'),
    (
        [("f", "spine_core.features.nope", {})],
        'implementation "spine_core.features.nope" is not a feature kernel; allowed: spine_core.features.sma',
    ),
    ([("f", "ema", {"period": "3"})], 'implementation "ema" is not a feature kernel'),
    (
        [("f", "spine_core.features.ema", {"period": "0"})],
        'feature "f": f: parameter "period" = "0": an integer string from',
    ),
    ([("f", "spine_core.features.ema", {"period": "3.5"})], 'parameter "period" = "3.5"'),
    ([("f", "spine_core.features.ema", {})], 'parameter "period" = "<missing>"'),
    (
        [("f", "spine_core.features.ema", {"period": "3", "bogus": "1"})],
        'parameter "bogus" = "1": not a parameter of spine_core.features.ema; allowed: period, threshold',
    ),
    ([("f", "spine_core.features.bollinger", {"period": "20", "k": "-1"})], 'parameter "k" = "-1": a positive decimal'),
    ([("Fast", *EMA)], 'feature "Fast": "Fast" is not a feature id'),
]


@pytest.mark.parametrize(("features", "expected"), FEATURE_REFUSALS)
def test_feature_refusals_name_the_feature_and_parameter(
    features: list[tuple[str, str, dict[str, str]]], expected: str
) -> None:
    with pytest.raises(StrategyRuleError) as caught:
        StrategyKernel(features=features, rules=[], price_scale=2, size_scale=0)
    assert expected in str(caught.value)
    assert caught.value.symbol == "INVALID_STRATEGY" and str(caught.value).startswith("INVALID_STRATEGY: ")


RULE_REFUSALS: list[tuple[str, str]] = [
    (
        json.dumps({"key": "bar.nope", "op": "GT", "value": "1"}),
        '$.key: row key "bar.nope" is not readable; '
        "allowed: bar.open, bar.high, bar.low, bar.close, bar.volume, f.value",
    ),
    (json.dumps({"key": "f.value", "op": "GT", "ref": "g.value"}), '$.ref: row key "g.value" is not readable'),
    (json.dumps({"key": "rsi_14.nope", "op": "GT", "value": "1"}), 'row key "rsi_14.nope" is not readable'),
    (
        json.dumps({"key": "bar.close", "op": "ABOVE", "value": "1"}),
        '$.op: "ABOVE" is not an operator; allowed: LT, LE, GT, GE, EQ, NE (with value or ref)',
    ),
    ('{"key": "bar.close", "op": "GT", "value": 1.5}', "$.value"),
    (json.dumps({"key": "bar.close", "op": "GT", "value": 1}), "$.value: expected a string: a decimal string"),
    (json.dumps({"key": "bar.close", "op": "GT", "value": "1e3"}), '$.value: "1e3" is not a decimal string'),
    (json.dumps({"key": "bar.close", "op": "GT", "value": "-0"}), '"-0" is not a decimal string'),
    (json.dumps({**LEAF, "extra": 1}), 'unknown member "extra"; allowed: key, op, value'),
    (
        json.dumps({"key": "bar.close", "op": "BETWEEN", "low": "2", "high": "1.5"}),
        'BETWEEN low "2" is above high "1.5"; allowed: low <= high',
    ),
    (
        json.dumps({"key": "bar.close", "op": "BETWEEN", "low": "1", "high": "2", "ref": "bar.open"}),
        '$.ref: "ref" is not allowed with "BETWEEN"',
    ),
    (
        json.dumps({"key": "bar.close", "op": "IS_ABSENT", "ref": "bar.open"}),
        '$.ref: "ref" is not allowed with "IS_ABSENT"',
    ),
    (json.dumps({**LEAF, "ref": "bar.open"}), 'GT has both "ref" and "value"; allowed: exactly one of them'),
    (
        json.dumps({"key": "bar.close", "op": "CROSSES_ABOVE", "value": "1", "ref": "bar.open"}),
        "CROSSES_ABOVE has both",
    ),
    (
        json.dumps({"key": "bar.close", "op": "CROSSES_BELOW"}),
        'CROSSES_BELOW needs "ref" (a row key) or "value" (a decimal string)',
    ),
    (json.dumps({"key": "bar.close", "op": "CROSSES_ABOVE", "value": "x"}), '$.value: "x" is not a decimal string'),
    (json.dumps({"key": "bar.close"}), 'missing member "op"'),
    (json.dumps({"all": []}), "$.all: 0 conditions; allowed: 1..=32"),
    (json.dumps({"any": [LEAF] * 33}), "$.any: 33 conditions; allowed: 1..=32"),
    (json.dumps({"all": [LEAF], "any": [LEAF]}), 'unknown member "any"'),
    (json.dumps(nest(4)), "$.all[0].all[0].all[0].all[0]: nesting depth 5; allowed: at most 4"),
    (json.dumps({"any": [{"all": [LEAF, {"key": "bar.close", "op": "LT", "ref": "bar.x"}]}]}), "$.any[0].all[1].ref"),
    ("[]", "$: expected a condition object"),
    ('{"key": "bar.close", ', 'rule "r"'),
]


@pytest.mark.parametrize(("condition", "expected"), RULE_REFUSALS)
def test_rule_refusals_name_the_rule_and_path(condition: str, expected: str) -> None:
    with pytest.raises(StrategyRuleError) as caught:
        StrategyKernel(
            features=[("f", *EMA)], rules=[("ok", json.dumps(LEAF)), ("r", condition)], price_scale=2, size_scale=0
        )
    message = str(caught.value)
    assert message.startswith('INVALID_STRATEGY: rule "r": '), message
    assert expected in message, message


def test_the_deepest_nesting_and_widest_group_are_accepted() -> None:
    rules = [("deep", json.dumps(nest(3))), ("wide", json.dumps({"any": [LEAF] * 32}))]
    kernel = StrategyKernel(features=[], rules=rules, price_scale=2, size_scale=0)
    assert kernel.update(MINUTE, 200, 200, 200, 200, 1) == 0b10


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"rules": [(f"r{i}", json.dumps(LEAF)) for i in range(33)]}, "33 rules; allowed: at most 32"),
        ({"rules": [("a", json.dumps(LEAF))] * 2}, 'rule "a" is declared twice'),
        ({"price_scale": 19}, "price scale 19 is out of range; allowed: 0..=18"),
        ({"size_scale": -1}, "size scale -1 is out of range"),
        ({"price_scale": True}, "price scale -1 is out of range"),
        ({"size_scale": 2**70}, "size scale -1 is out of range"),
    ],
)
def test_declaration_refusals(arguments: dict[str, Any], expected: str) -> None:
    with pytest.raises(StrategyRuleError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        base: dict[str, Any] = {"features": [], "rules": [], "price_scale": 2, "size_scale": 0}
        StrategyKernel(**(base | arguments))


def test_the_error_is_a_value_error_under_spine_error_and_the_same_class_everywhere() -> None:
    assert CoreStrategyRuleError is StrategyRuleError
    assert issubclass(StrategyRuleError, ValueError) and issubclass(StrategyRuleError, SpineError)


def test_bar_and_key_refusals() -> None:
    kernel = StrategyKernel(
        features=[],
        rules=[("r", json.dumps({"key": "bar.close", "op": "CROSSES_ABOVE", "value": "1"}))],
        price_scale=2,
        size_scale=0,
    )
    assert kernel.update(2 * MINUTE, 50, 50, 50, 50, 1) == 0
    with pytest.raises(FeatureError, match="UNSORTED_BARS"):
        kernel.update(MINUTE, 150, 150, 150, 150, 1)
    with pytest.raises(FeatureError, match="INCONSISTENT_BAR"):
        kernel.update(3 * MINUTE, 150, 100, 150, 150, 1)
    with pytest.raises(FeatureError, match="INVALID_BAR"):
        kernel.update(3 * MINUTE, 2**63, 2**63, 0, 0, 1)
    assert kernel.value("bar.close") == "0.50"
    assert kernel.update(3 * MINUTE, 150, 150, 150, 150, 1) == 1, "refused bars changed nothing"
    with pytest.raises(StrategyRuleError, match='row key "bar.nope" is not readable'):
        kernel.value("bar.nope")
    with pytest.raises(TypeError):
        StrategyKernel(features="ema", rules=[], price_scale=2, size_scale=0)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        StrategyKernel([], [], 2, 0)  # type: ignore[call-arg]
