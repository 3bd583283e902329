"""A declarative strategy as the runtime takes it: the parsed, parameter-substituted form of a
revision's ``strategy.toml``. The authoring validator produces it; the backtest runtime and
the worker consume it. Plain data only (msgspec), so it crosses process boundaries as JSON;
each backtest job stores it with its request (:mod:`spine.jobs.request`), so a field added
here takes a default.
"""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = ["FeatureDecl", "ParameterDecl", "StrategyPlan", "RULE_NAMES"]

#: The four rules a strategy may declare, in the order the kernel reports them (bit i of
#: ``StrategyKernel.update``'s answer is ``RULE_NAMES[i]``; an undeclared rule never fires).
RULE_NAMES = ("entry_long", "exit_long", "entry_short", "exit_short")


class ParameterDecl(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One declared parameter: its type, default and inclusive range, all as exact text
    (integers as decimal digits)."""

    name: str
    type: Literal["integer", "decimal"]
    default: str
    min: str
    max: str


class FeatureDecl(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One feature the rules read: an id, the kernel's ``implementation`` string
    (``spine_core.features.<kind>``) and its exact string parameters, after substitution."""

    feature_id: str
    implementation: str
    parameters: dict[str, str]


class StrategyPlan(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Everything a run needs from a revision, with parameter values already substituted."""

    name: str
    template_id: str | None
    instruments: list[str]
    resolution: str
    channel: Literal["EXTERNAL", "INTERNAL"]
    direction: Literal["LONG_ONLY", "SHORT_ONLY", "LONG_SHORT"]
    parameters: list[ParameterDecl]
    #: The values the run uses (defaults, or a request's overrides), by parameter name.
    values: dict[str, str]
    features: list[FeatureDecl]
    #: Rule name (one of RULE_NAMES) -> condition as canonical JSON text.
    rules: dict[str, str]
    #: The entry's size, exactly one of three (exact decimal text): ``quantity`` in the
    #: instrument's size units; ``fraction`` of the equity at the signal; ``notional`` in the
    #: quote currency. The last two are floored to whole size steps at the entry's close.
    quantity: str | None = None
    fraction: str | None = None
    notional: str | None = None
    #: Fractions of the entry price, checked at each bar close; None: none.
    stop_loss: str | None = None
    take_profit: str | None = None
