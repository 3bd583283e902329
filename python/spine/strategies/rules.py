"""The rule grammar: the screen filter conditions of ``svc.screen_definition`` plus ``ref``
comparisons and CROSSES_ABOVE / CROSSES_BELOW (see :mod:`spine.strategies.conditions`).

:func:`check_condition` reports every problem of one rule as it is written (operands may be
``"{param}"`` references); :func:`substitute` gives the condition the kernel takes, with the
parameters' values in place.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any

from spine.strategies.values import TomlFloat, exact, is_decimal, reference

__all__ = [
    "COMPARISONS",
    "CROSSINGS",
    "PRESENCE",
    "OPS",
    "MAX_DEPTH",
    "MAX_MEMBERS",
    "check_condition",
    "substitute",
    "condition_keys",
    "check_between",
]

COMPARISONS = ("LT", "LE", "GT", "GE", "EQ", "NE")
CROSSINGS = ("CROSSES_ABOVE", "CROSSES_BELOW")
PRESENCE = ("IS_ABSENT", "IS_NOT_ABSENT")
OPS = (*COMPARISONS, "BETWEEN", *PRESENCE, *CROSSINGS)
#: Nesting depth, the rule's own condition counting as 1 (as screens).
MAX_DEPTH = 4
#: Members of an ``all`` / ``any`` group.
MAX_MEMBERS = 32
#: The decimal operands, which may be ``"{param}"`` references.
DECIMAL_OPERANDS = ("value", "low", "high")

Path = tuple[str | int, ...]
Report = Callable[[Path, str], None]


def _operands(op: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(required operand keys, keys of which exactly one is required) besides key and op."""
    if op == "BETWEEN":
        return ("low", "high"), ()
    if op in PRESENCE:
        return (), ()
    return (), ("value", "ref")


def _check_decimal(value: object, path: Path, parameters: Collection[str], report: Report) -> None:
    if isinstance(value, TomlFloat):  # reported once, where floats are
        return
    if not isinstance(value, str):
        report(path, f'must be a decimal string ("30", "0.5") or a "{{parameter}}" reference, not {_kind(value)}')
        return
    name = reference(value)
    if name is not None:
        if name not in parameters:
            report(path, f"{value!r} names no declared parameter; declared: {', '.join(parameters) or 'none'}")
    elif not is_decimal(value):
        report(path, f"{value!r} is not an exact decimal (^-?(0|[1-9][0-9]*)(\\.[0-9]+)?$, no exponent, no -0)")


def _check_key(value: object, path: Path, keys: Collection[str], broken: Collection[str], report: Report) -> None:
    if not isinstance(value, str):
        report(path, f"a row key is a string, not {_kind(value)}")
    elif value not in keys and value.split(".", 1)[0] not in broken:
        feature = value.split(".", 1)[0]
        outputs = sorted(k for k in keys if k.split(".", 1)[0] == feature)
        if outputs:
            report(path, f"unknown row key {value!r}; {feature} has: {', '.join(outputs)}")
        else:
            report(
                path,
                f"unknown row key {value!r}: not bar.open/high/low/close/volume, a declared "
                f"feature's output or a default-registry key (GET /v2/authoring/registry lists them)",
            )


def _kind(value: object) -> str:
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a float",
        str: "a string",
        list: "an array",
        dict: "a table",
    }.get(type(value), type(value).__name__)


def check_condition(
    node: object,
    path: Path,
    depth: int,
    keys: Collection[str],
    parameters: Collection[str],
    report: Report,
    broken: Collection[str] = (),
) -> None:
    """Report every problem of a condition at ``path`` (depth counts from 1). Keys of the
    ``broken`` features (declared, but already reported) are not reported again."""
    if not isinstance(node, dict):
        report(path, f"a condition is a table ({{ key = ..., op = ... }} or {{ all = [...] }}), not {_kind(node)}")
        return
    if depth > MAX_DEPTH:
        report(path, f"conditions nest at most {MAX_DEPTH} deep (the rule's own condition is 1)")
        return
    groups = [g for g in ("all", "any") if g in node]
    if groups:
        if len(node) != 1:
            report(path, f"a group holds only {groups[0]!r}; found keys: {', '.join(sorted(map(str, node)))}")
            return
        members = node[groups[0]]
        if not isinstance(members, list) or not 1 <= len(members) <= MAX_MEMBERS:
            report((*path, groups[0]), f"a group holds 1..{MAX_MEMBERS} conditions")
            return
        for index, member in enumerate(members):
            check_condition(member, (*path, groups[0], index), depth + 1, keys, parameters, report, broken)
        return
    op = node.get("op")
    if "key" not in node or op is None:
        report(path, "a test needs 'key' and 'op' (or the group is 'all' / 'any')")
        return
    if not isinstance(op, str) or op not in OPS:
        report((*path, "op"), f"unknown op {op!r}; allowed: {', '.join(OPS)}")
        return
    required, one_of = _operands(op)
    allowed = {"key", "op", *required, *one_of}
    unknown = sorted(str(k) for k in node if k not in allowed)
    if unknown:
        report(
            (*path, unknown[0]),
            f"unknown key(s) {', '.join(unknown)} for op {op}; allowed: {', '.join(sorted(allowed))}",
        )
    missing = [k for k in required if k not in node]
    if missing:
        report(path, f"op {op} needs {', '.join(missing)}")
    if one_of and sum(k in node for k in one_of) != 1:
        report(path, f"op {op} takes exactly one of 'value' (a decimal) or 'ref' (a row key)")
    _check_key(node["key"], (*path, "key"), keys, broken, report)
    if "ref" in node and "ref" in one_of:
        _check_key(node["ref"], (*path, "ref"), keys, broken, report)
    for operand in DECIMAL_OPERANDS:
        if operand in node and operand in allowed:
            _check_decimal(node[operand], (*path, operand), parameters, report)


def substitute(node: Any, values: Mapping[str, str]) -> Any:
    """The condition with every ``"{param}"`` operand replaced by the parameter's value."""
    if "all" in node or "any" in node:
        group = "all" if "all" in node else "any"
        return {group: [substitute(member, values) for member in node[group]]}
    out = dict(node)
    for operand in DECIMAL_OPERANDS:
        if operand in out:
            name = reference(out[operand])
            if name is not None:
                out[operand] = values[name]
    return out


def condition_keys(node: Any) -> list[str]:
    """Every row key a (checked) condition reads, keys and refs, in order."""
    if "all" in node or "any" in node:
        return [key for member in node["all" if "all" in node else "any"] for key in condition_keys(member)]
    return [node["key"], *([node["ref"]] if "ref" in node else [])]


def check_between(node: Any, path: Path, report: Report) -> None:
    """BETWEEN with ``low`` > ``high`` (after substitution) is refused."""
    if "all" in node or "any" in node:
        group = "all" if "all" in node else "any"
        for index, member in enumerate(node[group]):
            check_between(member, (*path, group, index), report)
    elif node.get("op") == "BETWEEN" and exact(node["low"]) > exact(node["high"]):
        report(path, f"BETWEEN low {node['low']} > high {node['high']}")
