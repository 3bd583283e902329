"""Spine's canonical JSON and identities against the committed vector file.

The vectors (``tests/data/canonical_json.json``) come from the plain-Python reference in
``tests/reference/``; the last test regenerates them and requires the file to be current, so
the reference and the committed bytes cannot drift apart.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import spine
from reference import make_vectors
from reference.python_values import DistinctStr, build

VECTORS: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parents[1] / "data" / "canonical_json.json").read_text("utf-8")
)
CASES = VECTORS["cases"]
TEXT_CASES = [case for case in CASES if "input" in case]
VALUE_CASES = [case for case in CASES if "value" in case]
REFUSALS = VECTORS["refusals"]


def _ids(cases: list[dict[str, Any]]) -> list[str]:
    return [case["name"] for case in cases]


def _expected(case: dict[str, Any]) -> bytes:
    expected = bytes.fromhex(case["canonical_hex"])
    assert expected == case["canonical"].encode("utf-8"), "vector file is inconsistent"
    return expected


def _refusal_of(call: Any) -> tuple[str, str | None]:
    with pytest.raises(spine.CanonicalJsonError) as info:
        call()
    error = info.value
    assert isinstance(error, ValueError) and isinstance(error, spine.SpineError)
    assert str(error).startswith(f"{error.symbol}: "), str(error)
    return error.symbol, error.path


def _check_refusal(case: dict[str, Any], call: Any) -> None:
    symbol, path = _refusal_of(call)
    if case["path"] is None:  # a syntax error: the path is not pinned
        assert symbol == case["symbol"]
    else:
        assert (symbol, path) == (case["symbol"], case["path"])


def test_the_vector_file_covers_every_refusal_symbol() -> None:
    symbols = {case["symbol"] for case in REFUSALS}
    assert symbols == {
        "FLOAT_REFUSED",
        "INTEGER_OUT_OF_RANGE",
        "NON_STRING_KEY",
        "DUPLICATE_KEY",
        "LONE_SURROGATE",
        "INVALID_UTF8",
        "NESTING_TOO_DEEP",
        "INVALID_JSON",
        "UNSUPPORTED_TYPE",
    }
    assert VECTORS["max_depth"] == spine.MAX_JSON_DEPTH == 128


@pytest.mark.parametrize("case", TEXT_CASES, ids=_ids(TEXT_CASES))
def test_canonicalize_text(case: dict[str, Any]) -> None:
    expected = _expected(case)
    assert spine.canonicalize(case["input"]) == expected
    assert spine.canonicalize(case["input"].encode("utf-8")) == expected
    assert spine.canonicalize(expected) == expected  # idempotent


@pytest.mark.parametrize("case", TEXT_CASES, ids=_ids(TEXT_CASES))
def test_canonical_json_of_the_parsed_text(case: dict[str, Any]) -> None:
    value = json.loads(case["input"])
    assert spine.canonical_json(value) == _expected(case)
    for name, identity in case["identities"].items():
        assert spine.identity(name, value) == identity


@pytest.mark.parametrize("case", VALUE_CASES, ids=_ids(VALUE_CASES))
def test_canonical_json_of_python_values(case: dict[str, Any]) -> None:
    value = build(case["value"])
    assert spine.canonical_json(value) == _expected(case)
    for name, identity in case["identities"].items():
        assert spine.identity(name, value) == identity


@pytest.mark.parametrize("case", REFUSALS, ids=_ids(REFUSALS))
def test_refusal(case: dict[str, Any]) -> None:
    if "value" in case:
        value = build(case["value"])
        _check_refusal(case, lambda: spine.canonical_json(value))
        _check_refusal(case, lambda: spine.identity("config_hash", value))
    elif "input_hex" in case:
        data = bytes.fromhex(case["input_hex"])
        _check_refusal(case, lambda: spine.canonicalize(data))
    elif "input_codepoints" in case:
        text = "".join(map(chr, case["input_codepoints"]))
        _check_refusal(case, lambda: spine.canonicalize(text))
    else:
        _check_refusal(case, lambda: spine.canonicalize(case["input"]))
        _check_refusal(case, lambda: spine.canonicalize(case["input"].encode("utf-8")))


@pytest.mark.parametrize("case", VECTORS["identity_names"], ids=lambda case: case["name"])
def test_identity_name_accepted(case: dict[str, str]) -> None:
    assert spine.identity(case["name"], json.loads(case["input"])) == case["identity"]


@pytest.mark.parametrize("name", VECTORS["identity_name_refusals"])
def test_identity_name_refused(name: str) -> None:
    with pytest.raises(spine.IdentityNameError) as info:
        spine.identity(name, {})
    assert info.value.symbol == "INVALID_IDENTITY_NAME"
    assert isinstance(info.value, ValueError)


def test_identity_name_with_a_lone_surrogate_is_an_identity_name_error() -> None:
    # Every error Spine raises derives from SpineError (spine/errors.py); a name that is not
    # even valid Unicode is still just a bad identity name.
    with pytest.raises(spine.IdentityNameError):
        spine.identity("config_hash\ud800", {})


def test_the_name_is_checked_before_the_value() -> None:
    with pytest.raises(spine.IdentityNameError):
        spine.identity("Bad", 1.5)


def test_identity_is_64_lowercase_hex() -> None:
    for case in CASES:
        for identity in case["identities"].values():
            assert len(identity) == 64 and set(identity) <= set("0123456789abcdef")


# behaviour the file cannot hold


def test_a_self_referencing_list_is_too_deep_not_a_crash() -> None:
    loop: list[object] = []
    loop.append(loop)
    symbol, path = _refusal_of(lambda: spine.canonical_json(loop))
    assert (symbol, path) == ("NESTING_TOO_DEEP", "$" + "[0]" * 128)


def test_a_self_referencing_dict_is_too_deep_not_a_crash() -> None:
    loop: dict[str, object] = {}
    loop["k"] = loop
    symbol, path = _refusal_of(lambda: spine.identity("config_hash", loop))
    assert (symbol, path) == ("NESTING_TOO_DEEP", "$" + ".k" * 128)


def test_canonicalize_refuses_other_argument_types() -> None:
    for argument in (bytearray(b"{}"), memoryview(b"{}"), {}, None, 1):
        with pytest.raises(TypeError):
            spine.canonicalize(argument)  # type: ignore[arg-type]


def test_distinct_str_keys_are_a_duplicate() -> None:
    value = {"k": 1, DistinctStr("k"): 2}
    assert len(value) == 2
    assert _refusal_of(lambda: spine.canonical_json(value)) == ("DUPLICATE_KEY", "$.k")


def test_overridden_dunders_do_not_change_the_bytes() -> None:
    class LoudInt(int):
        def __str__(self) -> str:
            return "loud"

        __repr__ = __str__

    class LoudStr(str):
        def __str__(self) -> str:
            return "loud"

    class LoudDict(dict):  # type: ignore[type-arg]
        def items(self):  # type: ignore[no-untyped-def]
            return [("loud", 0)]

    value = LoudDict({LoudStr("k"): [LoudInt(7), LoudStr("v")]})
    assert spine.canonical_json(value) == b'{"k":[7,"v"]}'


def test_vector_file_is_what_the_reference_produces_now() -> None:
    current = make_vectors.VECTOR_FILE.read_text(encoding="utf-8")
    assert current == make_vectors.render(), (
        "tests/data/canonical_json.json is stale: run tests/reference/make_vectors.py"
    )


@pytest.mark.parametrize(
    ("text", "symbol"),
    [
        (b'{"a":1}\xff', "INVALID_UTF8"),  # not UTF-8 after a whole document: an encoding error
        (b'{"a":1} \x80', "INVALID_UTF8"),
        (b'{"a":1}x\xff', "INVALID_JSON"),  # the first defect is the stray "x"
        (b'{"a":1}}', "INVALID_JSON"),
    ],
)
def test_trailing_bytes_are_refused_by_their_first_defect(text: bytes, symbol: str) -> None:
    with pytest.raises(spine.CanonicalJsonError) as caught:
        spine.canonicalize(text)
    assert str(caught.value).startswith(symbol + ":"), caught.value
