"""Reference canonical JSON and identities (pinned decisions 2 and 3) in plain Python.

An oracle, written for clarity rather than speed, from the rules alone:

* keys sorted by code point (compared here as UTF-8 bytes, never as UTF-16 units);
* ``,`` and ``:`` with no whitespace; integers only, within signed 64 bit;
* strings escape ``"``, ``\\`` and the C0 controls (``\\b \\f \\n \\r \\t`` for those five,
  lowercase ``\\u00xx`` for the rest); everything else is raw UTF-8;
* identity = lowercase hex SHA-256 of ``u64_be(len(D)) || D || u64_be(len(C)) || C`` with
  ``D = "spine.v2/<name>"`` and ``C`` the canonical bytes.

Refusals raise :class:`CanonicalRefusal` with the wire ``symbol`` and the JSON ``path``, using
Spine's conventions: a refused value is reported where it sits; a non-string key (and a key
holding a lone surrogate) at the object that holds it; a duplicate key at the object path plus
the key; nesting past :data:`MAX_DEPTH` at the first container past the limit. For JSON text,
syntax errors are ``INVALID_JSON`` and their path is not pinned (``path`` is ``None``).

For JSON text the parsing is the stdlib's ``json.loads`` with hooks that turn floats, integers
outside 64 bit, NaN/Infinity and objects into markers, plus explicit checks for what ``json``
accepts but Spine refuses: a byte-order mark, bytes that are not UTF-8, lone surrogates,
duplicate keys and nesting past the limit. A small structural scanner locates the JSON path of
a byte offset for the refusals ``json`` cannot place (invalid UTF-8, nesting, non-string keys).

When a document has several defects, which one is reported is not pinned; tests built on this
module inject exactly one. For a single defect the order here mirrors a single left-to-right
pass: JSON text is refused in document order, duplicate keys (found while writing) in canonical
order; for Python values each dict's keys are checked before its values are written.
"""

from __future__ import annotations

import hashlib
import json
import re
import struct
from typing import NoReturn

__all__ = [
    "MAX_DEPTH",
    "I64_MIN",
    "I64_MAX",
    "CanonicalRefusal",
    "IdentityNameRefusal",
    "canonical_dumps",
    "canonicalize",
    "format_path",
    "identity",
    "identity_of_canonical",
    "quote",
]

MAX_DEPTH = 128
I64_MIN = -(2**63)
I64_MAX = 2**63 - 1
DOMAIN_PREFIX = "spine.v2/"

Segment = str | int

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_IDENTITY_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
_SURROGATE = re.compile("[\ud800-\udfff]")
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_SHORT_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}
_NON_STRING_KEY_START = frozenset("-0123456789tfn[{")
_WHITESPACE = " \t\n\r"
_BOM = b"\xef\xbb\xbf"


class CanonicalRefusal(ValueError):
    """A refusal of the reference: ``symbol`` as on the wire, ``path`` a JSON path or None."""

    def __init__(self, symbol: str, path: str | None, detail: str = "") -> None:
        super().__init__(f"{symbol}: at {path}: {detail}")
        self.symbol = symbol
        self.path = path


class IdentityNameRefusal(ValueError):
    """An identity name outside ``^[a-z][a-z0-9_]{0,63}$``."""

    symbol = "INVALID_IDENTITY_NAME"


def _refuse(symbol: str, path: list[Segment] | None, detail: str = "") -> NoReturn:
    raise CanonicalRefusal(symbol, None if path is None else format_path(path), detail)


# strings and paths


def quote(text: str) -> str:
    """``text`` as a canonical JSON string literal (the caller has refused lone surrogates)."""
    parts = ['"']
    for char in text:
        escaped = _SHORT_ESCAPES.get(char)
        if escaped is not None:
            parts.append(escaped)
        elif ord(char) < 0x20:
            parts.append(f"\\u{ord(char):04x}")
        else:
            parts.append(char)
    parts.append('"')
    return "".join(parts)


def format_path(segments: list[Segment]) -> str:
    """``$``, then ``.key`` / ``["key"]`` / ``[n]`` per segment."""
    out = ["$"]
    for segment in segments:
        if isinstance(segment, int):
            out.append(f"[{segment}]")
        elif _IDENTIFIER.fullmatch(segment):
            out.append(f".{segment}")
        else:
            out.append(f"[{quote(segment)}]")
    return "".join(out)


def _has_surrogate(text: str) -> bool:
    return _SURROGATE.search(text) is not None


# Python values


class _Pairs(list):  # type: ignore[type-arg]
    """An object parsed from JSON text: its (key, value) members in document order."""


def canonical_dumps(value: object) -> bytes:
    """The canonical JSON bytes of a Python value.

    Accepted: None, bool, int (and subclasses) within signed 64 bit, str (and subclasses),
    dict (and subclasses) with str keys, list and tuple (and subclasses) as arrays.
    """
    out: list[str] = []
    _write(value, [], 0, out)
    return "".join(out).encode("utf-8")


def _enter(path: list[Segment], depth: int) -> None:
    """``depth`` counts the containers enclosing this one; the root container is level 1."""
    if depth >= MAX_DEPTH:
        _refuse("NESTING_TOO_DEEP", path, f"containers nest deeper than {MAX_DEPTH} levels")


def _write(value: object, path: list[Segment], depth: int, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, float):
        _refuse("FLOAT_REFUSED", path, f"float {value!r}")
    elif isinstance(value, int):
        number = int.__int__(value)  # the integer value, past any overridden dunders
        if not I64_MIN <= number <= I64_MAX:
            _refuse("INTEGER_OUT_OF_RANGE", path, "integer outside signed 64 bit")
        out.append(int.__repr__(number))
    elif isinstance(value, str):
        if _has_surrogate(value):
            _refuse("LONE_SURROGATE", path, "string holds a lone surrogate")
        out.append(quote(value))
    elif isinstance(value, _Pairs):
        _enter(path, depth)
        for key, _ in value:
            if _has_surrogate(key):
                _refuse("LONE_SURROGATE", path, "key holds a lone surrogate")
        _write_members(list(value), path, depth, out)
    elif isinstance(value, dict):
        _enter(path, depth)
        members: list[tuple[str, object]] = []
        for key, item in dict.items(value):
            if not isinstance(key, str):
                _refuse("NON_STRING_KEY", path, f"key of type {type(key).__name__}")
            if _has_surrogate(key):
                _refuse("LONE_SURROGATE", path, "key holds a lone surrogate")
            members.append((str.__str__(key), item))
        _write_members(members, path, depth, out)
    elif isinstance(value, (list, tuple)):
        _enter(path, depth)
        getitem = list.__getitem__ if isinstance(value, list) else tuple.__getitem__
        length = list.__len__(value) if isinstance(value, list) else tuple.__len__(value)
        out.append("[")
        for index in range(length):
            if index:
                out.append(",")
            _write(getitem(value, index), [*path, index], depth + 1, out)  # type: ignore[arg-type]
        out.append("]")
    else:
        _refuse("UNSUPPORTED_TYPE", path, f"type {type(value).__name__}")


def _write_members(members: list[tuple[str, object]], path: list[Segment], depth: int, out: list[str]) -> None:
    members.sort(key=lambda member: member[0].encode("utf-8"))
    for (key, _), (next_key, _) in zip(members, members[1:], strict=False):
        if key == next_key:
            _refuse("DUPLICATE_KEY", [*path, key], "key appears more than once")
    out.append("{")
    for position, (key, item) in enumerate(members):
        if position:
            out.append(",")
        out.append(quote(key))
        out.append(":")
        _write(item, [*path, key], depth + 1, out)
    out.append("}")


# identities


def identity_of_canonical(name: str, canonical: bytes) -> str:
    """The identity ``spine.v2/<name>`` of already-canonical bytes."""
    if not isinstance(name, str) or _IDENTITY_NAME.fullmatch(name) is None:
        raise IdentityNameRefusal(f"INVALID_IDENTITY_NAME: {name!r}")
    domain = (DOMAIN_PREFIX + name).encode("utf-8")
    preimage = struct.pack(">Q", len(domain)) + domain + struct.pack(">Q", len(canonical)) + canonical
    return hashlib.sha256(preimage).hexdigest()


def identity(name: str, value: object) -> str:
    """The identity ``spine.v2/<name>`` of a Python value (the name is checked first)."""
    identity_of_canonical(name, b"")
    return identity_of_canonical(name, canonical_dumps(value))


# JSON text


class _FloatToken(str):
    """A number with a fraction or exponent, as written."""


class _BigInt(str):
    """An integer outside signed 64 bit, as written."""


class _Constant(Exception):
    """NaN / Infinity / -Infinity: not JSON."""


def _parse_int(text: str) -> int | _BigInt:
    if len(text.lstrip("-")) > 19:  # also keeps int() away from its digit-count limit
        return _BigInt(text)
    number = int(text)
    return number if I64_MIN <= number <= I64_MAX else _BigInt(text)


def _parse_constant(text: str) -> NoReturn:
    raise _Constant(text)


def canonicalize(text: str | bytes) -> bytes:
    """Parse JSON text strictly and return its canonical bytes."""
    if isinstance(text, str):
        if _has_surrogate(text):
            _refuse("LONE_SURROGATE", [], "the text holds a lone surrogate")
        data = text.encode("utf-8")
    elif isinstance(text, bytes):
        data = text
    else:
        raise TypeError(f"canonicalize() takes str or bytes, not {type(text).__name__}")
    if data.startswith(_BOM):
        _refuse("INVALID_JSON", [], "a byte-order mark")
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        where = _scan(data[: exc.start].decode("utf-8")).path
        _refuse("INVALID_UTF8", where, f"invalid UTF-8 at byte {exc.start}")
    scan = _scan(decoded)
    if scan.too_deep:
        _refuse("NESTING_TOO_DEEP", scan.path, "containers nest too deep")
    try:
        tree = json.loads(
            decoded,
            object_pairs_hook=_Pairs,
            parse_float=_FloatToken,
            parse_int=_parse_int,
            parse_constant=_parse_constant,
        )
    except _Constant as exc:
        _refuse("INVALID_JSON", None, f"{exc} is not JSON")
    except json.JSONDecodeError as exc:
        if (
            exc.msg.startswith("Expecting property name")
            and exc.pos < len(decoded)
            and decoded[exc.pos] in _NON_STRING_KEY_START
        ):
            _refuse("NON_STRING_KEY", _scan(decoded[: exc.pos]).path, "key is not a string")
        _refuse("INVALID_JSON", None, exc.msg)
    _first_refusal(tree, [])
    out: list[str] = []
    _write(tree, [], 0, out)
    return "".join(out).encode("utf-8")


def _first_refusal(node: object, path: list[Segment]) -> None:
    """Refuse the first float, wide integer or lone surrogate in document order."""
    if isinstance(node, _FloatToken):
        _refuse("FLOAT_REFUSED", path, f"number {node} has a fraction or exponent")
    if isinstance(node, _BigInt):
        _refuse("INTEGER_OUT_OF_RANGE", path, f"integer {node} is outside signed 64 bit")
    if isinstance(node, str):
        if _has_surrogate(node):
            _refuse("LONE_SURROGATE", path, "string holds a lone surrogate")
    elif isinstance(node, _Pairs):
        for key, item in node:
            if _has_surrogate(key):
                _refuse("LONE_SURROGATE", path, "key holds a lone surrogate")
            _first_refusal(item, [*path, key])
    elif isinstance(node, list):
        for index, item in enumerate(node):
            _first_refusal(item, [*path, index])


class _Scan:
    """Where a left-to-right scan of (a prefix of) JSON text stopped, as a JSON path."""

    def __init__(self, path: list[Segment], too_deep: bool) -> None:
        self.path = path
        self.too_deep = too_deep


def _string_end(text: str, start: int) -> int | None:
    """The index just past the string token opening at ``start``, or None if unterminated."""
    index = start + 1
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
        elif char == '"':
            return index + 1
        else:
            index += 1
    return None


def _key_of(token: str) -> str:
    try:
        key = json.loads(token)
    except ValueError:
        return token[1:-1]
    return key if isinstance(key, str) else token[1:-1]


def _scan(text: str) -> _Scan:
    """Scan ``text`` structurally; stop at its end or at the first container past the limit.

    The path names the place the scan stopped, with the conventions of Spine's strict parser:
    at a value position (including inside a string or unfinished literal) the value's path; in
    key position or after a complete value, the path of the enclosing container; between a key
    and its colon, the object path plus that key.
    """
    # A frame is [kind, segment, state]: kind "array" | "object"; state "value" (a value goes
    # here: the segment is part of the path), "after" (a value ended), "key" (a key goes here),
    # "colon" (a key ended; the segment is part of the path).
    frames: list[list[object]] = []
    top = ["root", None, "value"]

    def path() -> list[Segment]:
        # (Malformed text can leave a frame without a segment; any path will do there.)
        in_path = [f for f in frames if f[2] in ("value", "colon") and f[1] is not None]
        return [frame[1] for frame in in_path]  # type: ignore[misc]

    def current() -> list[object]:
        return frames[-1] if frames else top

    index = 0
    while index < len(text):
        char = text[index]
        frame = current()
        if char in _WHITESPACE:
            index += 1
        elif char == '"':
            end = _string_end(text, index)
            if end is None:  # stopped inside this string (a key's own object, a value's path)
                return _Scan(path(), False)
            if frame[2] == "key":
                frame[1], frame[2] = _key_of(text[index:end]), "colon"
            else:
                frame[2] = "after"
            index = end
        elif char in "[{":
            if frame[2] == "key":  # a non-string key: reported at the object
                return _Scan(path(), False)
            if len(frames) >= MAX_DEPTH:
                return _Scan(path(), True)
            frames.append(["array", 0, "value"] if char == "[" else ["object", None, "key"])
            index += 1
        elif char in "]}":
            if frames:
                frames.pop()
            current()[2] = "after"
            index += 1
        elif char == ",":
            if frames and frame[0] == "array":
                frame[1] = int(frame[1]) + 1  # type: ignore[call-overload]
                frame[2] = "value"
            elif frames:
                frame[1], frame[2] = None, "key"
            index += 1
        elif char == ":":
            if frame[2] == "colon":
                frame[2] = "value"
            index += 1
        else:  # a number or a literal
            end = index
            while end < len(text) and text[end] not in ' \t\n\r,:[]{}"':
                end += 1
            token = text[index:end]
            complete = _JSON_NUMBER.fullmatch(token) or token in ("true", "false", "null")
            if end == len(text) and not complete:
                return _Scan(path(), False)
            frame[2] = "after"
            index = end
    return _Scan(path(), False)
