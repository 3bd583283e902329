"""What a strategy can read: the feature kinds it may declare (their parameters and outputs),
the default registry's features and row keys, and the bar's own keys. Read from
``spine._core`` once, so the validator, the registries and the kernel agree by construction.

Kinds come from ``spine._core.feature_kinds()`` when the extension has it, else from the
implementations of the default registry (``feature_specs()``). A kind's outputs (names and
scales) are those of a default spec of the same implementation.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from spine import _core

__all__ = [
    "BAR_KEYS",
    "IMPLEMENTATION_PREFIX",
    "OPTIONAL_PARAMETERS",
    "FeatureKind",
    "RegistryFeature",
    "feature_kinds",
    "registry_features",
    "registry_row_keys",
]

#: The bar's own row keys: prices at the instrument's price scale, volume at its size scale.
BAR_KEYS = ("bar.open", "bar.high", "bar.low", "bar.close", "bar.volume")
#: ``implementation`` = this prefix + kind.
IMPLEMENTATION_PREFIX = "spine_core.features."
#: Parameters every kind accepts and none requires (the registry's signal threshold).
OPTIONAL_PARAMETERS = ("threshold",)


@dataclass(frozen=True)
class FeatureKind:
    """A kernel a strategy may declare: ``kind = "<kind>"`` under ``[features.<id>]``."""

    kind: str
    implementation: str
    #: The parameters it requires, sorted.
    parameters: tuple[str, ...]
    #: Output name -> scale (None when no default spec tells it).
    outputs: dict[str, int | None]


@dataclass(frozen=True)
class RegistryFeature:
    """A feature of the default registry (what the screener computes)."""

    feature_id: str
    implementation: str
    parameters: dict[str, str]
    #: Output name -> scale.
    outputs: dict[str, int]


@cache
def registry_features() -> tuple[RegistryFeature, ...]:
    """The default registry, in registry order."""
    return tuple(
        RegistryFeature(
            feature_id=spec["feature_id"],
            implementation=spec["implementation"],
            parameters=dict(spec["parameters"]),
            outputs={o["name"]: int(o["scale"]) for o in spec["outputs"]},
        )
        for spec in _core.feature_specs()
    )


@cache
def registry_row_keys() -> tuple[str, ...]:
    """Every default-registry row key ``<feature_id>.<output>``, in registry order."""
    return tuple(f"{f.feature_id}.{name}" for f in registry_features() for name in f.outputs)


def _kinds_from_core() -> list[dict[str, Any]] | None:
    kinds = getattr(_core, "feature_kinds", None)
    if kinds is None:
        return None
    listed: list[dict[str, Any]] = kinds()
    return listed


@cache
def feature_kinds() -> dict[str, FeatureKind]:
    """Every declarable kind by name, sorted by name."""
    outputs: dict[str, dict[str, int | None]] = {}
    parameters: dict[str, tuple[str, ...]] = {}
    for feature in registry_features():
        outputs.setdefault(feature.implementation, dict(feature.outputs))
        parameters.setdefault(
            feature.implementation, tuple(sorted(p for p in feature.parameters if p not in OPTIONAL_PARAMETERS))
        )
    listed = _kinds_from_core()
    if listed is not None:
        rows = [
            (
                str(k["implementation"]),
                tuple(sorted(str(p) for p in k["parameters"] if p not in OPTIONAL_PARAMETERS)),
                k.get("outputs"),
            )
            for k in listed
        ]
    else:
        rows = [(impl, parameters[impl], None) for impl in outputs]
    kinds: dict[str, FeatureKind] = {}
    for implementation, names, declared in rows:
        if not implementation.startswith(IMPLEMENTATION_PREFIX):
            continue
        kind = implementation.removeprefix(IMPLEMENTATION_PREFIX)
        if declared:
            outs: dict[str, int | None] = {
                (o["name"] if isinstance(o, dict) else str(o)): (
                    int(o["scale"])
                    if isinstance(o, dict) and "scale" in o
                    else outputs.get(implementation, {}).get(o["name"] if isinstance(o, dict) else str(o))
                )
                for o in declared
            }
        else:
            outs = dict(outputs.get(implementation, {}))
        kinds[kind] = FeatureKind(kind=kind, implementation=implementation, parameters=names, outputs=outs)
    return dict(sorted(kinds.items()))
