"""The three ways to compute a Spine identity that the benchmarks compare.

The rivals are what a user would write by hand: orjson with sorted keys, or the stdlib json
module, then hashlib over the length-prefixed, domain-separated preimage of pinned decision 3.
Both rivals agree with Spine on the benchmark documents (ASCII keys, no floats); they are not
canonical in general (they accept floats, and json.dumps sorts keys by UTF-16 unit).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

import orjson

import spine


def _preimage(name: str, canonical: bytes) -> bytes:
    domain = f"spine.v2/{name}".encode()
    return len(domain).to_bytes(8, "big") + domain + len(canonical).to_bytes(8, "big") + canonical


def spine_identity(name: str, doc: Any) -> str:
    return spine.identity(name, doc)


def orjson_identity(name: str, doc: Any) -> str:
    canonical = orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(_preimage(name, canonical)).hexdigest()


def json_identity(name: str, doc: Any) -> str:
    canonical = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    return hashlib.sha256(_preimage(name, canonical)).hexdigest()


PATHS: dict[str, Callable[[str, Any], str]] = {
    "spine": spine_identity,
    "orjson+hashlib": orjson_identity,
    "json.dumps+hashlib": json_identity,
}
