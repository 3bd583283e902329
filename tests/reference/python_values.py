"""Python values that JSON cannot spell, written as tagged JSON in the vector file.

A JSON object with exactly one key that is one of the tags below stands for a Python value;
everything else is plain JSON (objects become dicts, arrays lists). ``build`` turns a tagged
tree into the Python value, so vector cases can hold tuples, floats, bytes, subclasses, non-str
keys and lone surrogates while the file stays valid UTF-8 JSON.
"""

from __future__ import annotations

import enum
from collections import OrderedDict
from decimal import Decimal
from typing import Any

__all__ = ["TAGS", "build"]


class IntSub(int):
    """An int subclass (accepted as its integer value)."""


class StrSub(str):
    """A str subclass (accepted as its text)."""


class ListSub(list):  # type: ignore[type-arg]
    """A list subclass (accepted as an array)."""


class FloatSub(float):
    """A float subclass (refused like any float)."""


class DistinctStr(str):
    """A str that a dict keeps apart from the equal plain str: two members, one key text."""

    __slots__ = ()

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return self is not other


def _nest(spec: dict[str, Any]) -> object:
    """``depth`` containers of ``kind`` around ``leaf`` (objects use the key ``a``)."""
    value = build(spec["leaf"])
    for _ in range(spec["depth"]):
        kind = spec["kind"]
        value = {"a": value} if kind == "dict" else (value,) if kind == "tuple" else [value]
    return value


def _int_enum(value: int) -> object:
    return enum.IntEnum("Level", {"MEMBER": value}).MEMBER


TAGS = {
    "$tuple": lambda items: tuple(build(item) for item in items),
    "$list_subclass": lambda items: ListSub(build(item) for item in items),
    "$dict": lambda pairs: {build(key): build(value) for key, value in pairs},
    "$ordered_dict": lambda pairs: OrderedDict((build(k), build(v)) for k, v in pairs),
    "$float": float,
    "$float_subclass": lambda text: FloatSub(text),
    "$int_subclass": IntSub,
    "$int_enum": _int_enum,
    "$str_subclass": StrSub,
    "$distinct_str": DistinctStr,
    "$codepoints": lambda codes: "".join(map(chr, codes)),
    "$bytes": bytes.fromhex,
    "$decimal": Decimal,
    "$set": lambda items: {build(item) for item in items},
    "$object": lambda _: object(),
    "$nest": _nest,
}


def build(tagged: Any) -> Any:
    """The Python value a tagged JSON tree stands for."""
    if isinstance(tagged, dict):
        if len(tagged) == 1:
            tag, argument = next(iter(tagged.items()))
            if tag in TAGS:
                return TAGS[tag](argument)
        return {key: build(value) for key, value in tagged.items()}
    if isinstance(tagged, list):
        return [build(item) for item in tagged]
    return tagged
