"""The v1 fixture routes' documents: committed example ``v1.*`` documents shipped in the package
(``spine/_fixtures/``), answered as their canonical JSON bytes so every process, run and build
of the same files answers identical bytes. Their ids and times are fixed (``fixture-run``,
November 2023): they are fixtures for a client's decoders, never live data.
"""

from __future__ import annotations

import functools
from pathlib import Path

from spine._core import canonicalize

__all__ = ["FIXTURE_DIR", "fixture_bytes"]

FIXTURE_DIR = Path(__file__).resolve().parents[1] / "_fixtures"


@functools.cache
def fixture_bytes(document: str) -> bytes:
    """The canonical bytes of the committed example ``<document>.json`` (e.g. ``v1.bars``)."""
    return canonicalize((FIXTURE_DIR / f"{document}.json").read_bytes())
