"""Property tests: Spine's canonical JSON and identities against the plain-Python reference.

Random documents lean on the places canonical JSON goes wrong: astral characters, every C0
control, U+007F, U+2028/U+2029, "/", keys that sort differently by code point than by UTF-16
unit, the 64-bit integer extremes and nesting up to the limit. Refusals are checked by
injecting exactly one defect at a random position and requiring the same symbol and path from
Spine, from the reference and from where the defect was put.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import spine
from reference import canonical_json as ref

MAX_DEPTH = ref.MAX_DEPTH
I64_MIN, I64_MAX = ref.I64_MIN, ref.I64_MAX
IDENTITY_NAMES = ("config_hash", "bar_fingerprint", "signal_key", "event_id", "run_id")

# strategies

SPECIAL_CHARS = [chr(code) for code in range(0x20)] + [
    "\x7f", "\u2028", "\u2029", "/", '"', "\\", "\u00e9", "\u0080", "\u07ff", "\u0800",
    "\ud7ff", "\ue000", "\uff61", "\ufeff", "\ufffe", "\uffff",
    "\U00010000", "\U0001f600", "\U0001d11e", "\U0010ffff", "a", "A", "_", ".", " ",
]  # fmt: skip
# Keys around the one place code-point order and UTF-16 order differ: BMP characters above the
# surrogate block (U+E000..U+FFFF) sort before astral ones by code point, after them by unit.
EDGE_KEYS = [
    "", "a", "b", "ab", "abc", "A", "_", "a.b", "rsi_14.value", "\uff61", "\U0001f600",
    "\ue000", "\uffff", "\U00010000", "\U0010ffff", "\ud7ff", "\u00e9", "e\u0301", "\x00",
    "\x7f", "/", "feat_0000000001", "feat_0000000002",
]  # fmt: skip

chars = st.one_of(
    st.sampled_from(SPECIAL_CHARS),
    st.characters(codec="utf-8"),
    st.characters(min_codepoint=0x10000, codec="utf-8"),
)
texts = st.text(chars, max_size=12)
keys = st.one_of(st.sampled_from(EDGE_KEYS), texts)
ints = st.one_of(
    st.integers(I64_MIN, I64_MAX),
    st.sampled_from([I64_MIN, I64_MIN + 1, -1, 0, 1, I64_MAX - 1, I64_MAX]),
)
scalars = st.one_of(st.none(), st.booleans(), ints, texts)


def _children(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(inner, max_size=5),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(keys, inner, max_size=5),
    )


documents = st.recursive(scalars, _children, max_leaves=30)
containers = _children(documents)


@st.composite
def deep_documents(draw: st.DrawFn, min_depth: int = 1, max_depth: int = MAX_DEPTH) -> Any:
    """A chain of ``depth`` containers (lists, tuples, dicts) around a scalar."""
    depth = draw(
        st.one_of(
            st.integers(min_depth, max_depth),
            st.integers(max(min_depth, max_depth - 3), max_depth),  # at the limit, often
        )
    )
    value = draw(scalars)
    for kind in draw(st.lists(st.sampled_from("ltd"), min_size=depth, max_size=depth)):
        if kind == "d":
            siblings = draw(st.dictionaries(keys, scalars, max_size=2))
            value = {**siblings, draw(keys): value}
        else:
            value = [value] if kind == "l" else (value,)
    return value


def _nest_depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_nest_depth(item) for item in value.values()), default=0)
    if isinstance(value, (list, tuple)):
        return 1 + max((_nest_depth(item) for item in value), default=0)
    return 0


# helpers


def _spine_outcome(call: Any) -> tuple[str, Any]:
    try:
        return "ok", call()
    except spine.CanonicalJsonError as error:
        return error.symbol, error.path


def _reference_outcome(call: Any) -> tuple[str, Any]:
    try:
        return "ok", call()
    except ref.CanonicalRefusal as error:
        return error.symbol, error.path


def _slots(node: Any, path: list[Any]) -> list[list[Any]]:
    """The path of every place a value sits, the root included, in document order."""
    found = [path]
    if isinstance(node, dict):
        for key, item in node.items():
            found += _slots(item, [*path, key])
    elif isinstance(node, (list, tuple)):
        for index, item in enumerate(node):
            found += _slots(item, [*path, index])
    return found


def _replace(node: Any, path: list[Any], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(node, dict):
        return {k: _replace(item, rest, new) if k == head else item for k, item in node.items()}
    items = [_replace(item, rest, new) if i == head else item for i, item in enumerate(node)]
    return tuple(items) if isinstance(node, tuple) else items


@st.composite
def nests(draw: st.DrawFn, depth: int, leaf: Any) -> tuple[Any, list[Any]]:
    """``depth`` containers around ``leaf``, with the path segments from the outside in."""
    kinds = draw(st.lists(st.sampled_from("ltd"), min_size=depth, max_size=depth))
    segments: list[Any] = []
    value = leaf
    for kind in reversed(kinds):
        if kind == "d":
            key = draw(keys)
            value = {key: value}
            segments.insert(0, key)
        else:
            value = [value] if kind == "l" else (value,)
            segments.insert(0, 0)
    return value, segments


def _with_surrogate(draw: st.DrawFn) -> str:
    surrogate = chr(draw(st.integers(0xD800, 0xDFFF)))
    return draw(texts) + surrogate + draw(texts)


NON_STR_KEYS = st.one_of(
    st.integers(), st.none(), st.booleans(), st.floats(allow_nan=False),
    st.tuples(st.integers()), st.binary(max_size=2), st.just(Decimal("1")),
)  # fmt: skip
UNSUPPORTED = st.sampled_from([b"x", bytearray(b"x"), Decimal("1.5"), {1, 2}, frozenset(), object(), 1j, range(2), ...])


VALUE_DEFECTS = {
    "float": "FLOAT_REFUSED",
    "int": "INTEGER_OUT_OF_RANGE",
    "surrogate": "LONE_SURROGATE",
    "non_str_key": "NON_STRING_KEY",
    "surrogate_key": "LONE_SURROGATE",
    "too_deep": "NESTING_TOO_DEEP",
    "type": "UNSUPPORTED_TYPE",
}


@st.composite
def value_defects(draw: st.DrawFn) -> tuple[Any, str, list[Any]]:
    """A document with exactly one defect, the expected symbol and the expected path."""
    doc = draw(documents)
    path = draw(st.sampled_from([p for p in _slots(doc, []) if len(p) < MAX_DEPTH]))
    kind = draw(st.sampled_from(sorted(VALUE_DEFECTS)))
    symbol, where = VALUE_DEFECTS[kind], list(path)
    if kind == "float":
        defect: Any = draw(st.floats())
    elif kind == "int":
        defect = draw(
            st.one_of(
                st.sampled_from([I64_MAX + 1, I64_MIN - 1, 2**64, -(2**64), 10**40]),
                st.integers(min_value=I64_MAX + 1),
                st.integers(max_value=I64_MIN - 1),
            )
        )
    elif kind == "surrogate":
        defect = _with_surrogate(draw)
    elif kind in ("non_str_key", "surrogate_key"):
        bad_key = draw(NON_STR_KEYS) if kind == "non_str_key" else _with_surrogate(draw)
        members = list(draw(st.dictionaries(keys, scalars, max_size=3)).items())
        members.insert(draw(st.integers(0, len(members))), (bad_key, draw(scalars)))
        defect = dict(members)
    elif kind == "too_deep":
        defect, segments = draw(nests(MAX_DEPTH + 1 - len(path), draw(scalars)))
        where += segments[: MAX_DEPTH - len(path)]
    else:
        defect = draw(UNSUPPORTED)
    return _replace(doc, path, defect), symbol, where


# accepted documents


@given(documents)
def test_canonical_json_matches_the_reference(doc: Any) -> None:
    assert spine.canonical_json(doc) == ref.canonical_dumps(doc)


@given(deep_documents())
def test_deep_documents_match_the_reference(doc: Any) -> None:
    assert _nest_depth(doc) <= MAX_DEPTH
    canonical = spine.canonical_json(doc)
    assert canonical == ref.canonical_dumps(doc)
    assert spine.canonicalize(canonical) == canonical


NAMES = st.sampled_from(IDENTITY_NAMES) | st.from_regex(r"[a-z][a-z0-9_]{0,63}", fullmatch=True)


@given(documents, NAMES)
def test_identity_matches_the_reference(doc: Any, name: str) -> None:
    assert spine.identity(name, doc) == ref.identity(name, doc)


@given(
    st.one_of(documents, deep_documents(max_depth=MAX_DEPTH)),
    st.booleans(),
    st.sampled_from([None, 0, 1, "\t", " \r\n "]),
)
def test_canonicalize_of_any_json_spelling(doc: Any, ensure_ascii: bool, indent: Any) -> None:
    text = json.dumps(doc, ensure_ascii=ensure_ascii, indent=indent)
    expected = spine.canonical_json(doc)
    assert spine.canonicalize(text) == expected
    assert spine.canonicalize(text.encode("utf-8")) == expected
    assert ref.canonicalize(text) == expected


@given(documents)
def test_canonicalize_is_idempotent(doc: Any) -> None:
    canonical = spine.canonical_json(doc)
    assert spine.canonicalize(canonical) == canonical
    assert spine.canonicalize(canonical.decode("utf-8")) == canonical


@given(containers)
def test_output_is_sorted_and_means_the_same(doc: Any) -> None:
    """Reference-free: the bytes are UTF-8 JSON equal to the input, keys in byte order."""
    canonical = spine.canonical_json(doc)
    assert not any(byte < 0x20 for byte in canonical)
    assert json.loads(canonical) == json.loads(json.dumps(doc))

    def check(pairs: list[tuple[str, Any]]) -> None:
        encoded = [key.encode("utf-8") for key, _ in pairs]
        assert encoded == sorted(encoded) and len(set(encoded)) == len(encoded)

    json.loads(canonical, object_pairs_hook=lambda pairs: check(pairs))


# refusals


@given(value_defects())
def test_one_defect_in_a_value(case: tuple[Any, str, list[Any]]) -> None:
    doc, symbol, where = case
    expected = (symbol, ref.format_path(where))
    assert _reference_outcome(lambda: ref.canonical_dumps(doc)) == expected
    assert _spine_outcome(lambda: spine.canonical_json(doc)) == expected
    assert _spine_outcome(lambda: spine.identity("config_hash", doc)) == expected


@given(deep_documents(min_depth=MAX_DEPTH, max_depth=MAX_DEPTH), st.sampled_from("ltd"))
def test_one_level_past_the_limit(doc: Any, kind: str) -> None:
    wrapped = {"k": doc} if kind == "d" else [doc] if kind == "l" else (doc,)
    reference = _reference_outcome(lambda: ref.canonical_dumps(wrapped))
    assert reference[0] == "NESTING_TOO_DEEP"
    assert _spine_outcome(lambda: spine.canonical_json(wrapped)) == reference
    text = json.dumps(wrapped)
    assert _spine_outcome(lambda: spine.canonicalize(text)) == reference
    assert _reference_outcome(lambda: ref.canonicalize(text)) == reference


HOLE = "\ue000\u2063hole\u2063\ue001"  # a placeholder value the strategies will not produce
FLOAT_TOKEN = r"-?(0|[1-9][0-9]{0,3})(\.[0-9]{1,3}([eE][+-]?[0-9]{1,3})?|[eE][+-]?[0-9]{1,3})"
# A stray byte, a continuation byte, a truncated sequence, an encoded surrogate, an overlong
# form, a code point above U+10FFFF.
NOT_UTF8 = [b"\xff", b"\x80", b"\xc3", b"\xed\xa0\x80", b"\xc0\xaf", b"\xf4\x90\x80\x80"]


@st.composite
def text_defects(draw: st.DrawFn) -> tuple[bytes, str, list[Any]]:
    """JSON text (as bytes) with exactly one defect, the expected symbol and path."""
    doc = draw(documents)
    path = draw(st.sampled_from([p for p in _slots(doc, []) if len(p) < MAX_DEPTH]))
    ensure_ascii = draw(st.booleans())
    indent = draw(st.sampled_from([None, 1]))
    text = json.dumps(_replace(doc, path, HOLE), ensure_ascii=ensure_ascii, indent=indent)
    hole = json.dumps(HOLE, ensure_ascii=ensure_ascii)
    assert text.count(hole) == 1
    kind = draw(st.sampled_from(["float", "int", "surrogate", "non_str_key", "duplicate", "too_deep", "utf8"]))
    where = list(path)

    def spelled(value: str) -> str:
        return json.dumps(value, ensure_ascii=ensure_ascii)

    if kind == "float":
        symbol = "FLOAT_REFUSED"
        defect = draw(st.from_regex(FLOAT_TOKEN, fullmatch=True))
    elif kind == "int":
        symbol = "INTEGER_OUT_OF_RANGE"
        big = draw(st.one_of(st.integers(min_value=I64_MAX + 1), st.integers(max_value=I64_MIN - 1)))
        defect = str(big)
    elif kind == "surrogate":
        symbol = "LONE_SURROGATE"
        unit = draw(st.integers(0xD800, 0xDFFF))
        escape = draw(st.sampled_from([f"\\u{unit:04x}", f"\\u{unit:04X}"]))
        defect = spelled(draw(texts))[:-1] + escape + "x" + spelled(draw(texts))[1:]
    elif kind == "non_str_key":
        symbol = "NON_STRING_KEY"
        token = draw(st.sampled_from(["1", "-2", "0", "true", "false", "null", "[]", "{}", "[1]"]))
        before = draw(st.dictionaries(keys, scalars, max_size=2))
        members = [f"{spelled(key)}:{json.dumps(value)}" for key, value in before.items()]
        defect = "{" + ",".join([*members, f"{token}:1"]) + "}"
    elif kind == "duplicate":
        symbol = "DUPLICATE_KEY"
        key = draw(keys)
        others = draw(st.dictionaries(keys.filter(lambda other: other != key), scalars, max_size=3))
        members = [(spelled(key), "1"), (json.dumps(key, ensure_ascii=True), "2")]
        members += [(spelled(other), json.dumps(value)) for other, value in others.items()]
        order = draw(st.permutations(members))
        defect = "{" + ",".join(f"{k}:{v}" for k, v in order) + "}"
        where.append(key)
    elif kind == "too_deep":
        symbol = "NESTING_TOO_DEEP"
        nest, segments = draw(nests(MAX_DEPTH + 1 - len(path), draw(scalars)))
        defect = json.dumps(nest, ensure_ascii=ensure_ascii)
        where += segments[: MAX_DEPTH - len(path)]
    else:
        symbol = "INVALID_UTF8"
        bad = draw(st.sampled_from(NOT_UTF8))
        head, tail = text.encode("utf-8").split(hole.encode("utf-8"))
        string = spelled(draw(texts)).encode("utf-8")
        return head + string[:-1] + bad + string[-1:] + tail, symbol, where
    return text.replace(hole, defect).encode("utf-8"), symbol, where


@given(text_defects())
def test_one_defect_in_json_text(case: tuple[bytes, str, list[Any]]) -> None:
    data, symbol, where = case
    expected = (symbol, ref.format_path(where))
    assert _reference_outcome(lambda: ref.canonicalize(data)) == expected
    assert _spine_outcome(lambda: spine.canonicalize(data)) == expected
    if symbol != "INVALID_UTF8":
        text = data.decode("utf-8")
        assert _spine_outcome(lambda: spine.canonicalize(text)) == expected


@given(texts.filter(lambda text: text != ""), st.integers(0, 12), st.integers(0xD800, 0xDFFF))
def test_a_lone_surrogate_character_in_str_input(text: str, at: int, unit: int) -> None:
    source = json.dumps([text], ensure_ascii=False)
    at = min(at, len(source))
    bad = source[:at] + chr(unit) + source[at:]
    assert _spine_outcome(lambda: spine.canonicalize(bad)) == ("LONE_SURROGATE", "$")
    assert _reference_outcome(lambda: ref.canonicalize(bad)) == ("LONE_SURROGATE", "$")


# arbitrary input

JSONISH = list('[]{}",:-+0123456789.eE \t\n\r\\/ubfnrtlsaD8') + [
    "true", "false", "null", "\\u", "\\ud83d", "\\ude00", "\u00e9", "\U0001f600", "\x00", "\x7f",
]  # fmt: skip
jsonish_text = st.lists(st.sampled_from(JSONISH), max_size=40).map("".join)
any_text = st.text(st.one_of(st.characters(), st.integers(0xD800, 0xDFFF).map(chr)), max_size=40)


@st.composite
def mutated_json(draw: st.DrawFn) -> bytes:
    """Valid JSON text with a few random byte edits: near misses reach the deep error paths."""
    data = bytearray(json.dumps(draw(documents), ensure_ascii=draw(st.booleans())).encode())
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(data)))
        edit = draw(st.sampled_from(["insert", "delete", "replace"]))
        byte = draw(st.one_of(st.sampled_from(b'[]{}",:-.0e\\u \xff\xc3\x80'), st.integers(0, 255)))
        if edit == "insert":
            data[at:at] = bytes([byte])
        elif at < len(data):
            data[at : at + 1] = b"" if edit == "delete" else bytes([byte])
    return bytes(data)


def _agree(source: str | bytes) -> None:
    """Spine returns bytes or raises CanonicalJsonError (nothing else), like the reference."""
    spine_result = _spine_outcome(lambda: spine.canonicalize(source))
    reference_result = _reference_outcome(lambda: ref.canonicalize(source))
    # Which of several defects is reported is not pinned: compare acceptance, and bytes.
    if spine_result[0] == "ok" or reference_result[0] == "ok":
        assert spine_result == reference_result


@given(st.binary(max_size=64))
def test_arbitrary_bytes(data: bytes) -> None:
    _agree(data)


@given(st.one_of(any_text, jsonish_text))
def test_arbitrary_text(text: str) -> None:
    _agree(text)
    if not any("\ud800" <= char <= "\udfff" for char in text):
        _agree(text.encode("utf-8"))


@given(mutated_json())
def test_mutated_json(data: bytes) -> None:
    _agree(data)
