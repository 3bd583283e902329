"""The measured routes and the pre-built documents the rivals serve: fetched once from the
running Spine node, written to one JSON file, and loaded by each rival at import (the file's
path is in ``SPINE_BENCH_DOCS``)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from benches.http.procs import get

INSTRUMENT = "BTCUSDT.SIM"
#: Page name -> the path (with query) every server answers it on.
PATHS = {
    "bars_1m_500": f"/v2/bars?instrument_id={INSTRUMENT}&limit=500",
    "bars_1h": f"/v2/bars?bar_type={INSTRUMENT}-1-HOUR-LAST-EXTERNAL",
    "health": "/v2/health",
}


def fetch(base: str) -> dict[str, Any]:
    """Each page as Spine serves it now (parsed)."""
    documents = {}
    for name, path in PATHS.items():
        status, body = get(base + path)
        if status != 200:
            raise RuntimeError(f"spine answered {status} on {path}: {body[:300]!r}")
        documents[name] = json.loads(body)
    return documents


def write(documents: dict[str, Any], path: Path) -> Path:
    path.write_text(json.dumps(documents))
    return path


def load() -> dict[str, Any]:
    """The documents a rival serves (from ``SPINE_BENCH_DOCS``)."""
    return json.loads(Path(os.environ["SPINE_BENCH_DOCS"]).read_text())


def page_key(instrument_id: str | None, bar_type: str | None) -> str | None:
    """Which pre-built bars page a query names (the rivals serve exactly these two)."""
    if bar_type == f"{INSTRUMENT}-1-HOUR-LAST-EXTERNAL":
        return "bars_1h"
    if instrument_id == INSTRUMENT and bar_type is None:
        return "bars_1m_500"
    return None


def check(bases: dict[str, str], documents: dict[str, Any]) -> None:
    """Every rival serves the pre-built documents: parsed JSON equal to Spine's pages."""
    for server, base in bases.items():
        for name in PATHS:
            status, body = get(base + PATHS[name])
            if status != 200 or json.loads(body) != documents[name]:
                raise AssertionError(f"{server} does not serve spine's {name} page ({status}, {len(body)} bytes)")
