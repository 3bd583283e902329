"""HTTP and SSE rivals agree (the smoke check of benches/http; the timed runs are
``python -m benches.http.run``, which needs wrk and minutes, so pytest never times them).

- every rival serves Spine's pages: parsed JSON equal to what ``spine node`` served for the
  500-bar 1m page, the folded 1h page and /v2/health (the constant app: health only);
- every SSE server delivers every published event to a handful of subscribers;
- the screener bench's rival (FastAPI + polars over the screener's snapshot) ranks the rows
  Spine's screener ranks (``python -m benches.http.screener`` times them).

No timing assertions. Every server is a real process on a loopback port, always stopped.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benches.http import pages
from benches.http import screener as screener_bench
from benches.http.node import spine_node
from benches.http.procs import environment
from benches.http.servers import HEALTH_REFERENCE, HTTP_RIVALS, SSE_SERVERS, started
from benches.http.sse_client import run_clients

pytestmark = pytest.mark.timeout(180)


def test_rivals_serve_spines_pages(tmp_path: Path) -> None:
    with spine_node(tmp_path, minutes=600) as spine:
        documents = pages.fetch(spine)
        assert len(documents["bars_1m_500"]["bars"]) == 500 and documents["bars_1h"]["bars"]
        env = environment(SPINE_BENCH_DOCS=str(pages.write(documents, tmp_path / "documents.json")))
        with started([*HTTP_RIVALS, HEALTH_REFERENCE], tmp_path, env) as rivals:
            pages.check(rivals, documents)


@pytest.mark.parametrize("spec", SSE_SERVERS, ids=lambda spec: spec.name)
def test_sse_servers_deliver_every_event(tmp_path: Path, spec: object) -> None:
    with started([spec], tmp_path, environment()) as bases:
        port = int(next(iter(bases.values())).rsplit(":", 1)[1])
        result = run_clients(port, subscribers=5, rate=20.0, seconds=1.0, warmup=0.2, processes=2)
    assert result["refused"] == 0
    assert result["published"] >= 15 and result["delivered"] == result["expected"]


def test_screener_rival_ranks_the_screeners_rows(tmp_path: Path) -> None:
    """``benches.http.screener``'s setup: a real node and screener, the FastAPI + polars rival
    over the screener's snapshot ranking the same rows as Spine's screen."""
    with screener_bench.node(tmp_path, minutes=600) as node_base, screener_bench.screener(tmp_path, node_base) as base:
        rows = json.loads(screener_bench.snapshot_rows(base, tmp_path / "rows.json").read_text())
    assert len(rows) == 48 * 7
