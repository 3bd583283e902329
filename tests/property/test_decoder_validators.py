"""The client-side decoder's two validators agree: jsonschema-rs (which decides, fast) and
jsonschema (which names the cause of a refusal) give the same verdict on every published
example with one value anywhere in it replaced by an arbitrary wire value. A disagreement
still refuses, naming jsonschema-rs's cause."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spine.schemas import fast_validator_for, validator_for
from spine.wire import decoder

EXAMPLES = Path(__file__).resolve().parents[1] / "data" / "wire_examples"
IDS = sorted(path.stem for path in EXAMPLES.glob("*.json"))
WIRE = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


def example(schema_id: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((EXAMPLES / f"{schema_id}.json").read_text(encoding="utf-8"))
    return loaded


def places(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside ``value``."""
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += places(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += places(item, (*path, index))
    return found


def replaced(document: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    out = json.loads(json.dumps(document))
    holder = out
    for step in path[:-1]:
        holder = holder[step]
    holder[path[-1]] = value
    return out


@pytest.mark.parametrize("schema_id", IDS)
@given(data=st.data())
def test_the_two_validators_give_the_same_verdict(schema_id: str, data: st.DataObject) -> None:
    document = example(schema_id)
    tags = (document.get("schema_id", schema_id), document.get("schema_version", 1))  # the envelope has none
    path = data.draw(st.sampled_from([p for p in places(document) if p]))
    mutated = replaced(document, path, data.draw(WIRE))
    fast, slow = fast_validator_for(*tags), validator_for(*tags)
    assert fast.is_valid(mutated) == slow.is_valid(mutated), (path, mutated)


def test_a_disagreement_refuses_with_the_fast_validator_s_cause(monkeypatch: pytest.MonkeyPatch) -> None:
    class AcceptsAll:
        def iter_errors(self, document: Any) -> list[Any]:
            return []

    monkeypatch.setattr(decoder, "validator_for", lambda *key: AcceptsAll())
    document = example("svc.bar_envelope")
    document["bars"][0]["open"] = 5
    with pytest.raises(decoder.StructuralViolation, match=r"svc.bar_envelope v1 at \$.bars\[0\].open: 5 is not"):
        decoder.decode(json.dumps(document), "svc.bar_envelope")
