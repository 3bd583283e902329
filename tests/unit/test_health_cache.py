"""The health probe's document is rebuilt at most every HEALTH_REFRESH_NS: repeated probes
inside the window get the same bytes, a probe after it sees the node's new state."""

from __future__ import annotations

import json
import time
from typing import Any

from spine.node import reads
from spine.node.reads import MarketHandlers


class View:
    """A node view holding just what health reads."""

    def __init__(self, gaps: list[bool] | None = None) -> None:
        self.state = "STARTING"
        self.gaps = gaps or [False]

    def lifecycle(self) -> str:
        return self.state

    def engine_status(self, now: int) -> dict[str, Any]:
        return {"lifecycle": self.state, "authorities": []}

    def writes_refused(self) -> bool:
        return False

    def hydration_counts(self) -> dict[str, int]:
        return {"failed": 0}

    def gaps_unresolved(self) -> bool:
        return self.gaps[0]


def test_probes_share_one_document_until_it_is_due(monkeypatch: Any) -> None:
    node: Any = View()
    handlers = MarketHandlers(node)
    first = handlers.health_bytes()
    assert json.loads(first)["ready"] is False
    node.state = "RUNNING"
    assert handlers.health_bytes() is first  # inside the window: as produced, with its ts_event
    monkeypatch.setattr(reads, "HEALTH_REFRESH_NS", 0)
    time.sleep(0.001)
    assert json.loads(handlers.health_bytes())["ready"] is True


def test_unresolved_gaps_degrade_health_only_while_a_gap_is_unresolved_now() -> None:
    """Issue 23: the engine status' ``gaps`` counts buckets ever withheld and never clears;
    health is degraded by a gap only while one is unresolved."""
    unresolved = [True]
    node: Any = View(unresolved)
    node.state = "RUNNING"
    node.engine_status = lambda now: {
        "lifecycle": "RUNNING",
        "authorities": [{"authority": "EXTERNAL", "gaps": 7, "duplicates": 0, "out_of_order": 0}],
    }
    handlers = MarketHandlers(node)
    degraded = handlers.health_get(None, {})
    assert degraded["degraded"] and degraded["degraded_reasons"] == ["UNRESOLVED_GAPS"]
    unresolved[0] = False  # repaired, or confirmed empty by the venue: the counter stays 7
    healthy = handlers.health_get(None, {})
    assert not healthy["degraded"] and healthy["degraded_reasons"] == []
