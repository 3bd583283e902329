"""The reference: a bare Granian RSGI app answering each measured path with its document as
constant bytes (Spine's pages as captured, so every server sends the same bytes). On /v2/health
it is the issue's reference; on the bar pages it shows what serving those bytes costs at all on
this machine, the ceiling any server meets."""

from __future__ import annotations

import json
from typing import Any

from benches.http.pages import PATHS, load

BODIES = {PATHS[name]: json.dumps(document, separators=(",", ":")).encode() for name, document in load().items()}
HEADERS = [("content-type", "application/json")]


async def app(scope: Any, proto: Any) -> None:
    if scope.proto == "http":
        path = scope.path + ("?" + scope.query_string if scope.query_string else "")
        proto.response_bytes(200, HEADERS, BODIES.get(path, BODIES[PATHS["health"]]))
