"""Opaque, tamper-checked page cursors for the list routes (coverage, hydration, and the
gateway's pages that span nodes, whose cursors carry a payload: ``encode_token``).

A cursor is the position of the next page, signed so that a client can neither forge one
(skipping into the middle of a list it was never given) nor carry one from one route to
another, where the same position would index a different list. It is the base64url text (no
padding) of ``u64_be(offset) || HMAC-SHA256(key, domain || u64_be(len(route)) || route ||
u64_be(offset))[:16]``. The key is random per process: a cursor does not outlive the process
that issued it, and a stale one is refused as ``INVALID_CURSOR`` (the table's "has expired").
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from collections.abc import Sequence
from typing import TypeVar

from spine.errors import SpineError

__all__ = [
    "MAX_LIMIT",
    "MIN_LIMIT",
    "InvalidCursor",
    "LimitOutOfRange",
    "check_limit",
    "decode_cursor",
    "decode_token",
    "encode_cursor",
    "encode_token",
    "paginate",
]

MIN_LIMIT = 1
MAX_LIMIT = 1000
_MAX_OFFSET = 2**63 - 1
_KEY = secrets.token_bytes(32)
_DOMAIN = b"spine.v2/cursor"
_TAG_BYTES = 16  # HMAC-SHA256 truncated to 128 bits: forging still costs 2**128 tries
# 8 offset bytes + 16 tag bytes = 24 bytes = exactly 32 base64url characters, no padding.
_CURSOR = re.compile(r"[A-Za-z0-9_-]{32}")
_TOKEN = re.compile(r"[A-Za-z0-9_-]+")

T = TypeVar("T")


class InvalidCursor(SpineError, ValueError):
    """A cursor this process did not issue for this route: malformed, tampered with, carried
    over from another route, or issued before a restart."""

    symbol = "INVALID_CURSOR"


class LimitOutOfRange(SpineError, ValueError):
    """A page ``limit`` outside ``MIN_LIMIT..MAX_LIMIT``."""

    symbol = "LIMIT_OUT_OF_RANGE"


def _tag(route: str, body: bytes) -> bytes:
    name = route.encode("utf-8")
    message = _DOMAIN + len(name).to_bytes(8, "big") + name + body
    return hmac.new(_KEY, message, hashlib.sha256).digest()[:_TAG_BYTES]


def encode_cursor(route: str, offset: int) -> str:
    """The cursor of position ``offset`` on ``route``.

    Raises ``ValueError`` for an offset outside ``0..2**63-1`` (a caller bug, not a client's).
    """
    if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset <= _MAX_OFFSET:
        raise ValueError(f"cursor offset must be an integer in 0..{_MAX_OFFSET}, got {offset!r}")
    body = offset.to_bytes(8, "big")
    return base64.urlsafe_b64encode(body + _tag(route, body)).rstrip(b"=").decode("ascii")


def decode_cursor(route: str, cursor: str) -> int:
    """The offset ``cursor`` stands for on ``route``.

    Raises :class:`InvalidCursor` unless this process issued ``cursor`` for ``route``.
    """
    if not isinstance(cursor, str) or _CURSOR.fullmatch(cursor) is None:
        raise InvalidCursor(f"INVALID_CURSOR: {route}: the cursor is malformed")
    raw = base64.urlsafe_b64decode(cursor)
    body, tag = raw[:8], raw[8:]
    if not hmac.compare_digest(tag, _tag(route, body)):
        raise InvalidCursor(f"INVALID_CURSOR: {route}: the cursor was not issued by this route")
    return int.from_bytes(body, "big")


def encode_token(route: str, payload: bytes) -> str:
    """A cursor carrying ``payload`` (an upstream's position, say) on ``route``, signed as
    offsets are: ``payload || tag``, base64url without padding."""
    return base64.urlsafe_b64encode(payload + _tag(route, payload)).rstrip(b"=").decode("ascii")


def decode_token(route: str, cursor: str) -> bytes:
    """The payload ``cursor`` carries on ``route``; :class:`InvalidCursor` unless this process
    issued it for ``route``."""
    if not isinstance(cursor, str) or not 24 <= len(cursor) <= 4096 or _TOKEN.fullmatch(cursor) is None:
        raise InvalidCursor(f"INVALID_CURSOR: {route}: the cursor is malformed")
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    except ValueError:
        raise InvalidCursor(f"INVALID_CURSOR: {route}: the cursor is malformed") from None
    body, tag = raw[:-_TAG_BYTES], raw[-_TAG_BYTES:]
    if len(raw) < _TAG_BYTES or not hmac.compare_digest(tag, _tag(route, body)):
        raise InvalidCursor(f"INVALID_CURSOR: {route}: the cursor was not issued by this route")
    return body


def check_limit(limit: int) -> int:
    """``limit`` unchanged, or :class:`LimitOutOfRange` naming the allowed range."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not MIN_LIMIT <= limit <= MAX_LIMIT:
        raise LimitOutOfRange(
            f"LIMIT_OUT_OF_RANGE: limit must be an integer in {MIN_LIMIT}..{MAX_LIMIT}, got {limit!r}"
        )
    return limit


def paginate(route: str, cursor: str | None, limit: int, items: Sequence[T]) -> tuple[list[T], str | None]:
    """One page of ``items`` and the cursor of the next (None when exhausted).

    A cursor past the end (the list shrank since it was issued) yields an empty last page.
    """
    check_limit(limit)
    start = 0 if cursor is None else decode_cursor(route, cursor)
    stop = start + limit
    return list(items[start:stop]), (encode_cursor(route, stop) if stop < len(items) else None)
