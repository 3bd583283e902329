"""A study's search space: which of a revision's declared parameters it searches, over which
exact grid, and how Optuna's suggestions land on that grid.

Each searched parameter is one of (values are JSON integers or exact decimal strings, never
floats):

- ``{"low": L, "high": H, "step": S}``: ``L, L+S, ..., H``. ``step`` defaults to 1 for an
  integer parameter and is required for a decimal one; ``H - L`` is a whole number of steps.
  An integer is asked of Optuna with ``suggest_int(name, L, H, step=S)``. A decimal is asked
  with ``suggest_float(name, L, H, step=S)`` (so Optuna's samplers and dashboard see the real
  values) and mapped back exactly: ``k = round((x - L) / S)`` clipped to ``0..n``, the value
  ``L + k*S`` as decimal text at the step's scale.
- ``{"choices": [v, ...]}``: one of the values (at most :data:`MAX_CHOICES`, no repeats),
  asked with ``suggest_categorical`` over their text.

Every value lies within the parameter's declared ``min..max`` and has its declared type.
Anything else is a :class:`SpaceError` naming the parameter, the value and what is allowed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any, Protocol

from spine.strategies.plan import ParameterDecl
from spine.strategies.values import is_decimal, is_integer

__all__ = [
    "Choices",
    "DecimalRange",
    "IntegerRange",
    "MAX_CHOICES",
    "MAX_STEPS",
    "SearchSpace",
    "SpaceError",
    "describe",
    "parse_space",
]

#: The most choices one parameter may list.
MAX_CHOICES = 1_000
#: The most grid points one range may hold (a grid Optuna's samplers can still cover).
MAX_STEPS = 1_000_000


class SpaceError(ValueError):
    """A search space that cannot be searched: the text names what and what is allowed."""


class Trial(Protocol):
    """The part of an ``optuna.trial.Trial`` a space asks."""

    def suggest_int(self, name: str, low: int, high: int, *, step: int = 1) -> int: ...
    def suggest_float(self, name: str, low: float, high: float, *, step: float | None = None) -> float: ...
    def suggest_categorical(self, name: str, choices: Sequence[str]) -> str: ...


@dataclass(frozen=True)
class IntegerRange:
    name: str
    low: int
    high: int
    step: int

    def suggest(self, trial: Trial) -> str:
        return str(trial.suggest_int(self.name, self.low, self.high, step=self.step))

    def exact(self, value: Any) -> str:
        return str(int(value))


@dataclass(frozen=True)
class DecimalRange:
    name: str
    low: Decimal
    high: Decimal
    step: Decimal

    @property
    def steps(self) -> int:
        return int((self.high - self.low) / self.step)

    def suggest(self, trial: Trial) -> str:
        x = trial.suggest_float(self.name, float(self.low), float(self.high), step=float(self.step))
        return self.on_grid(x)

    def exact(self, value: Any) -> str:
        return self.on_grid(float(value))

    def on_grid(self, x: float) -> str:
        """The grid value nearest Optuna's ``x``, as exact text without trailing zeros."""
        k = ((Decimal(repr(x)) - self.low) / self.step).to_integral_value(ROUND_HALF_EVEN)
        k = min(max(k, Decimal(0)), Decimal(self.steps))
        return _text(self.low + k * self.step)


@dataclass(frozen=True)
class Choices:
    name: str
    values: tuple[str, ...]

    def suggest(self, trial: Trial) -> str:
        return trial.suggest_categorical(self.name, list(self.values))

    def exact(self, value: Any) -> str:
        return str(value)


Dimension = IntegerRange | DecimalRange | Choices


@dataclass(frozen=True)
class SearchSpace:
    """The searched parameters, in name order."""

    dimensions: tuple[Dimension, ...]

    def suggest(self, trial: Trial) -> dict[str, str]:
        """One value per searched parameter, as exact text, asked of ``trial``."""
        return {d.name: d.suggest(trial) for d in self.dimensions}

    def exact(self, params: Mapping[str, Any]) -> dict[str, str]:
        """The exact values of a trial's ``params`` as Optuna holds them (its floats mapped onto
        the grid), in name order; parameters the trial lacks are left out."""
        return {d.name: d.exact(params[d.name]) for d in self.dimensions if d.name in params}

    @property
    def names(self) -> list[str]:
        return [d.name for d in self.dimensions]


def parse_space(search: object, declared: Sequence[ParameterDecl]) -> SearchSpace:
    """The space ``search`` (parameter name -> range or choices) describes over the
    revision's ``declared`` parameters; :class:`SpaceError` otherwise."""
    if not isinstance(search, Mapping) or not search:
        raise SpaceError("search: an object naming at least one declared parameter, each with a range or choices")
    known = {p.name: p for p in declared}
    dimensions = []
    for name in sorted(search):
        if name not in known:
            declared_names = ", ".join(sorted(known)) or "none"
            raise SpaceError(f"search.{name}: not a declared parameter of the revision; declared: {declared_names}")
        dimensions.append(_dimension(known[name], search[name]))
    return SearchSpace(tuple(dimensions))


def _dimension(decl: ParameterDecl, spec: object) -> Dimension:
    where = f"search.{decl.name}"
    if not isinstance(spec, Mapping):
        raise SpaceError(f'{where}: an object, {{"low", "high", "step"}} or {{"choices"}}')
    keys = set(spec)
    if keys == {"choices"}:
        return _choices(decl, spec["choices"], where)
    if not keys <= {"low", "high", "step"} or not {"low", "high"} <= keys:
        raise SpaceError(
            f'{where}: keys {", ".join(sorted(map(str, keys)))}; allowed "low" and "high" with an optional "step", '
            'or "choices" alone'
        )
    low, high = _value(decl, spec["low"], f"{where}.low"), _value(decl, spec["high"], f"{where}.high")
    if low > high:
        raise SpaceError(f"{where}: low {_text(low)} is above high {_text(high)}")
    if "step" in spec:
        step = _number(decl, spec["step"], f"{where}.step")
    elif decl.type == "integer":
        step = Decimal(1)
    else:
        raise SpaceError(f'{where}.step: required for a decimal parameter (e.g. "0.1")')
    if step <= 0:
        raise SpaceError(f"{where}.step: {_text(step)}; allowed above 0")
    steps = (high - low) / step
    if steps != steps.to_integral_value():
        raise SpaceError(f"{where}: high - low ({_text(high - low)}) is not a whole number of steps of {_text(step)}")
    if steps > MAX_STEPS:
        raise SpaceError(f"{where}: {steps} steps; allowed at most {MAX_STEPS:,}")
    if decl.type == "integer":
        return IntegerRange(decl.name, int(low), int(high), int(step))
    return DecimalRange(decl.name, low, high, step)


def _choices(decl: ParameterDecl, values: object, where: str) -> Choices:
    if not isinstance(values, list) or not values or len(values) > MAX_CHOICES:
        raise SpaceError(f"{where}.choices: a list of 1 to {MAX_CHOICES:,} values")
    texts = [_text(_value(decl, v, f"{where}.choices[{i}]")) for i, v in enumerate(values)]
    if len(set(texts)) != len(texts):
        raise SpaceError(f"{where}.choices: {', '.join(texts)} repeats a value")
    return Choices(decl.name, tuple(texts))


def _number(decl: ParameterDecl, value: object, where: str) -> Decimal:
    """``value`` as an exact number of the parameter's type (a JSON integer or exact text)."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        shown = "a float" if isinstance(value, float) else type(value).__name__
        raise SpaceError(f"{where}: {shown} ({value!r}); allowed a JSON integer or an exact decimal string")
    text = str(value)
    if decl.type == "integer" and not is_integer(text):
        raise SpaceError(f"{where}: {value!r}; {decl.name} is an integer parameter (a JSON integer or digit string)")
    if not is_decimal(text):
        raise SpaceError(f'{where}: {value!r}; allowed exact decimal text such as "0.25" (no exponent)')
    return Decimal(text)


def _value(decl: ParameterDecl, value: object, where: str) -> Decimal:
    """``value`` as :func:`_number`, within the declared range."""
    number = _number(decl, value, where)
    low, high = Decimal(decl.min), Decimal(decl.max)
    if not low <= number <= high:
        raise SpaceError(f"{where}: {_text(number)} is outside {decl.name}'s declared range {decl.min}..{decl.max}")
    return number


def _text(value: Decimal) -> str:
    """Exact decimal text without trailing zeros: no exponent, no negative zero."""
    return "0" if value == 0 else format(value.normalize(), "f")


def describe(space: SearchSpace) -> dict[str, Any]:
    """The space as a body states it (the study document's record of what it searched)."""
    out: dict[str, Any] = {}
    for d in space.dimensions:
        if isinstance(d, Choices):
            out[d.name] = {"choices": list(d.values)}
        else:
            out[d.name] = {"low": _text(Decimal(d.low)), "high": _text(Decimal(d.high)), "step": _text(Decimal(d.step))}
    return out
