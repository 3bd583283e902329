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
    node = SimpleNamespace(status=Status(), refused_writes=0, hydration=SimpleNamespace(counts=lambda: {"failed": 0}),
                           gaps=SimpleNamespace(unresolved=lambda: False))
    handlers = MarketHandlers(node)
    first = handlers.health_bytes()
    assert json.loads(first)["ready"] is False
    node.status.lifecycle = "RUNNING"
    assert handlers.health_bytes() is first  # inside the window: as produced, with its ts_event
    monkeypatch.setattr(market, "HEALTH_REFRESH_NS", 0)
    time.sleep(0.001)
    assert json.loads(handlers.health_bytes())["ready"] is True


def test_unresolved_gaps_degrade_health_only_while_a_gap_is_unresolved_now() -> None:
    """Issue 23: the engine status' ``gaps`` counts buckets ever withheld and never clears;
    health is degraded by a gap only while one is unresolved."""
    status = Status()
    status.lifecycle = "RUNNING"
    status.document = lambda ts: {"lifecycle": "RUNNING", "authorities": [  # type: ignore[method-assign]
        {"authority": "EXTERNAL", "gaps": 7, "duplicates": 0, "out_of_order": 0}]}
    unresolved = [True]
    node = SimpleNamespace(status=status, refused_writes=0, hydration=SimpleNamespace(counts=lambda: {"failed": 0}),
                           gaps=SimpleNamespace(unresolved=lambda: unresolved[0]))
    handlers = MarketHandlers(node)
    degraded = handlers.health_get(None, {})
    assert degraded["degraded"] and degraded["degraded_reasons"] == ["UNRESOLVED_GAPS"]
    unresolved[0] = False  # repaired, or confirmed empty by the venue: the counter stays 7
    healthy = handlers.health_get(None, {})
    assert not healthy["degraded"] and healthy["degraded_reasons"] == []
