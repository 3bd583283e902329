"""The health probe's document is rebuilt at most every HEALTH_REFRESH_NS: repeated probes
inside the window get the same bytes, a probe after it sees the node's new state."""

from __future__ import annotations

import json
import time
from types import SimpleNamespace
from typing import Any

from spine.http import market
from spine.http.market import MarketHandlers


class Status:
    lifecycle = "STARTING"

    def document(self, ts: int) -> dict[str, Any]:
        return {"lifecycle": self.lifecycle, "authorities": []}


def test_probes_share_one_document_until_it_is_due(monkeypatch: Any) -> None:
    node = SimpleNamespace(status=Status(), refused_writes=0, hydration=SimpleNamespace(counts=lambda: {"failed": 0}))
    handlers = MarketHandlers(node)
    first = handlers.health_bytes()
    assert json.loads(first)["ready"] is False
    node.status.lifecycle = "RUNNING"
    assert handlers.health_bytes() is first  # inside the window: as produced, with its ts_event
    monkeypatch.setattr(market, "HEALTH_REFRESH_NS", 0)
    time.sleep(0.001)
    assert json.loads(handlers.health_bytes())["ready"] is True
