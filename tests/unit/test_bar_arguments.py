"""The six bar arguments (``ts_event, open, high, low, close, volume``) of every binding that
takes them: the signature names them as plain parameters, they bind by position, by name or
both, and a call that gets them wrong is a TypeError in Python's own words."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from spine._core import (
    FeatureState,
    FeatureUniverse,
    Series,
    StrategyKernel,
    bar_row,
    fold_columns,
    fold_columns_many,
)

M = 60_000_000_000
BASE = 19_700 * 1_440 * M
TS = BASE + np.arange(1, 4, dtype=np.uint64) * np.uint64(M)
PX = np.full(3, 100, np.int64)
NAMES = ("ts_event", "open", "high", "low", "close", "volume")
COLUMNS = (TS, PX, PX, PX, PX, PX)
BAR = (BASE + M, 1, 1, 1, 1, 1)


def _universe() -> FeatureUniverse:
    universe = FeatureUniverse(feature_ids=["sma_20"])
    universe.add(channel="INTERNAL", price_precision=2, size_precision=0)
    return universe


def _series() -> Series:
    return Series(channel="INTERNAL", price_precision=2, size_precision=0)


# (name in errors, the callable, its Python function, the arguments before the six, the six,
# keyword arguments it also needs)
BINDINGS: list[tuple[str, Callable[..., Any], Any, tuple[Any, ...], tuple[Any, ...], dict[str, Any]]] = [
    ("fold_columns", fold_columns, fold_columns, (), COLUMNS, {"resolution": "5m", "channel": "INTERNAL"}),
    (
        "fold_columns_many",
        fold_columns_many,
        fold_columns_many,
        (),
        COLUMNS,
        {"resolutions": ["5m"], "channel": "INTERNAL"},
    ),
    ("bar_row", bar_row, bar_row, (1,), BAR, {"price_precision": 2, "size_precision": 0}),
    ("Series.push", lambda *a, **k: _series().push(*a, **k), Series.push, (), BAR, {}),
    ("Series.extend", lambda *a, **k: _series().extend(*a, **k), Series.extend, (), COLUMNS, {}),
    (
        "FeatureState.warm",
        lambda *a, **k: FeatureState(price_scale=2, size_scale=0).warm(*a, **k),
        FeatureState.warm,
        (),
        COLUMNS,
        {},
    ),
    (
        "FeatureState.update",
        lambda *a, **k: FeatureState(price_scale=2, size_scale=0).update(*a, **k),
        FeatureState.update,
        (),
        BAR,
        {},
    ),
    ("FeatureUniverse.warm", lambda *a, **k: _universe().warm(*a, **k), FeatureUniverse.warm, (0,), COLUMNS, {}),
    (
        "FeatureUniverse.close_minute",
        lambda *a, **k: _universe().close_minute(*a, **k),
        FeatureUniverse.close_minute,
        (np.zeros(1, np.uint32),),
        tuple(c[:1] for c in COLUMNS),
        {},
    ),
    (
        "StrategyKernel.update",
        lambda *a, **k: StrategyKernel(features=[], rules=[], price_scale=2, size_scale=0).update(*a, **k),
        StrategyKernel.update,
        (),
        BAR,
        {},
    ),
]
IDS = [binding[0] for binding in BINDINGS]


@pytest.mark.parametrize(("name", "call", "function", "before", "six", "extra"), BINDINGS, ids=IDS)
def test_the_signature_names_the_six_as_plain_parameters(
    name: str,
    call: Callable[..., Any],
    function: Any,
    before: tuple[Any, ...],
    six: tuple[Any, ...],
    extra: dict[str, Any],
) -> None:
    parameters = [p for p in inspect.signature(function).parameters.values() if p.name != "self"]
    plain = [p.name for p in parameters if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    assert plain[len(before) :] == list(NAMES)
    keyword_only = [p.name for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY]
    assert set(extra) <= set(keyword_only)


@pytest.mark.parametrize(("name", "call", "function", "before", "six", "extra"), BINDINGS, ids=IDS)
def test_the_six_bind_by_position_by_name_or_both(
    name: str,
    call: Callable[..., Any],
    function: Any,
    before: tuple[Any, ...],
    six: tuple[Any, ...],
    extra: dict[str, Any],
) -> None:
    by_position = call(*before, *six, **extra)
    by_name = call(*before, **dict(zip(NAMES, six, strict=True)), **extra)
    both = call(*before, *six[:2], **dict(zip(NAMES[2:], six[2:], strict=True)), **extra)
    for result in (by_name, both):
        assert type(result) is type(by_position)
        if isinstance(by_position, (bytes, int, tuple)):
            assert result == by_position


@pytest.mark.parametrize(("name", "call", "function", "before", "six", "extra"), BINDINGS, ids=IDS)
def test_a_call_that_gets_the_six_wrong_is_refused_in_pythons_words(
    name: str,
    call: Callable[..., Any],
    function: Any,
    before: tuple[Any, ...],
    six: tuple[Any, ...],
    extra: dict[str, Any],
) -> None:
    refusals: list[tuple[Callable[[], Any], str]] = [
        (lambda: call(*before, *six[:-1], **extra), "missing 1 required positional argument: 'volume'"),
        (
            lambda: call(*before, *six[:3], **extra),
            "missing 3 required positional arguments: 'low', 'close', and 'volume'",
        ),
        (lambda: call(*before, *six[:4], **extra), "missing 2 required positional arguments: 'close' and 'volume'"),
        (
            lambda: call(*before, *six, six[0], **extra),
            f"takes {len(before) + 6} positional arguments but {len(before) + 7} were given",
        ),
        (lambda: call(*before, *six, ts_event=six[0], **extra), "got multiple values for argument 'ts_event'"),
        (lambda: call(*before, *six, bogus=1, **extra), "got an unexpected keyword argument 'bogus'"),
    ]
    for refused, words in refusals:
        with pytest.raises(TypeError) as caught:
            refused()
        assert str(caught.value) == f"{name}() {words}"
