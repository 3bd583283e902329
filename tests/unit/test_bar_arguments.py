"""The six bar arguments (``ts_event, open, high, low, close, volume``) of every binding that
takes them: the signature names them as plain parameters, they bind by position, by name or
both, and a call that gets them wrong is a TypeError in Python's own words."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, NamedTuple

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


class Binding(NamedTuple):
    """One binding that takes the six, and how to call it."""

    name: str  # as Python's TypeError names it
    call: Callable[..., Any]
    function: Any  # the Python function inspect reads the signature of
    before: tuple[Any, ...]  # the arguments before the six
    six: tuple[Any, ...]
    extra: dict[str, Any]  # keyword arguments it also needs


BINDINGS: list[Binding] = [
    Binding("fold_columns", fold_columns, fold_columns, (), COLUMNS, {"resolution": "5m", "channel": "INTERNAL"}),
    Binding(
        "fold_columns_many",
        fold_columns_many,
        fold_columns_many,
        (),
        COLUMNS,
        {"resolutions": ["5m"], "channel": "INTERNAL"},
    ),
    Binding("bar_row", bar_row, bar_row, (1,), BAR, {"price_precision": 2, "size_precision": 0}),
    Binding("Series.push", lambda *a, **k: _series().push(*a, **k), Series.push, (), BAR, {}),
    Binding("Series.extend", lambda *a, **k: _series().extend(*a, **k), Series.extend, (), COLUMNS, {}),
    Binding(
        "FeatureState.warm",
        lambda *a, **k: FeatureState(price_scale=2, size_scale=0).warm(*a, **k),
        FeatureState.warm,
        (),
        COLUMNS,
        {},
    ),
    Binding(
        "FeatureState.update",
        lambda *a, **k: FeatureState(price_scale=2, size_scale=0).update(*a, **k),
        FeatureState.update,
        (),
        BAR,
        {},
    ),
    Binding("FeatureUniverse.warm", lambda *a, **k: _universe().warm(*a, **k), FeatureUniverse.warm, (0,), COLUMNS, {}),
    Binding(
        "FeatureUniverse.close_minute",
        lambda *a, **k: _universe().close_minute(*a, **k),
        FeatureUniverse.close_minute,
        (np.zeros(1, np.uint32),),
        tuple(c[:1] for c in COLUMNS),
        {},
    ),
    Binding(
        "StrategyKernel.update",
        lambda *a, **k: StrategyKernel(features=[], rules=[], price_scale=2, size_scale=0).update(*a, **k),
        StrategyKernel.update,
        (),
        BAR,
        {},
    ),
]
IDS = [binding.name for binding in BINDINGS]


@pytest.mark.parametrize("binding", BINDINGS, ids=IDS)
def test_the_signature_names_the_six_as_plain_parameters(binding: Binding) -> None:
    parameters = [p for p in inspect.signature(binding.function).parameters.values() if p.name != "self"]
    plain = [p.name for p in parameters if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    assert plain[len(binding.before) :] == list(NAMES)
    keyword_only = [p.name for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY]
    assert set(binding.extra) <= set(keyword_only)


@pytest.mark.parametrize("binding", BINDINGS, ids=IDS)
def test_the_six_bind_by_position_by_name_or_both(binding: Binding) -> None:
    _, call, _, before, six, extra = binding
    by_position = call(*before, *six, **extra)
    by_name = call(*before, **dict(zip(NAMES, six, strict=True)), **extra)
    both = call(*before, *six[:2], **dict(zip(NAMES[2:], six[2:], strict=True)), **extra)
    for result in (by_name, both):
        assert type(result) is type(by_position)
        if isinstance(by_position, (bytes, int, tuple)):
            assert result == by_position


@pytest.mark.parametrize("binding", BINDINGS, ids=IDS)
def test_a_call_that_gets_the_six_wrong_is_refused_in_pythons_words(binding: Binding) -> None:
    name, call, _, before, six, extra = binding
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
