"""The UI in headless chromium, through real processes on loopback (a node, the gateway,
``spine web``):

- first render: the Market page opened on an instrument whose node holds 5,000 one-minute
  bars (a catalog venue over a ``spine import`` of 6,000 minutes), from navigation to the chart
  drawn (the page's ``performance.now()`` when the candles are set), ``SPINE_BENCH_UI_ROUNDS``
  rounds (5; smoke 1); the round's wall time is pytest-benchmark's;
- a bar's way to the page: a simulated venue at 600x closes a bar every 0.1 s; each bar's
  arrival at a page reading the node's own stream and at the UI's page (through the gateway's
  hub and the web proxy), both on the browser's clock, for ``SPINE_BENCH_UI_SECONDS`` (10;
  smoke 3) seconds.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from browsers import chromium  # noqa: E402
from gateways import spawn_gateway  # noqa: E402
from nodes import free_port, get, node_env, running_node, spawn, spine_import, stop, wait_for  # noqa: E402
from webs import spine_web  # noqa: E402

ROUNDS = int(os.environ.get("SPINE_BENCH_UI_ROUNDS", "5"))
SECONDS = float(os.environ.get("SPINE_BENCH_UI_SECONDS", "10"))
MINUTES, VENUE = 6_000, "BENCH"
IID = f"BTCUSD.{VENUE}"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


def _csv(path: Path) -> None:
    start, rows = 1_735_689_600, []
    for k in range(1, MINUTES + 1):
        o, c = 4_200_000 + (k * 37) % 901, 4_200_000 + (k * 53) % 887
        h, low = max(o, c) + k % 17, min(o, c) - k % 13
        text = lambda m: f"{m // 100}.{m % 100:02d}"  # noqa: E731
        rows.append(f"{(start + 60 * k) * 10**9},{text(o)},{text(h)},{text(low)},{text(c)},{k % 50 + 1}\n")
    path.write_text("timestamp,open,high,low,close,volume\n" + "".join(rows))


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``spine web`` over a gateway over a catalog-venue node holding 6,000 imported minutes."""
    home = tmp_path_factory.mktemp("ui-first-render")
    catalog = home / "imports"
    _csv(home / "btcusd.csv")  # the symbol is the file's name
    spine_import("--venue", VENUE, "--catalog", str(catalog), str(home / "btcusd.csv"), env=node_env(home / "unused"))
    port = free_port()
    config = home / "node.toml"
    config.write_text(f'venue = "catalog"\nport = {port}\n[catalog]\npath = "{catalog}"\nvenue_name = "{VENUE}"\n')
    node_url = f"http://127.0.0.1:{port}"
    node = spawn(config, node_env(home / "data"))
    try:
        wait_for(node, lambda: bool(get(node_url + "/v2/health")[1]["ready"]), "the catalog node ready")
        gateway_process, gateway = spawn_gateway(home / "gateway", [node_url], f"http://127.0.0.1:{free_port()}")
        try:
            wait_for(gateway_process, lambda: get(gateway + "/v2/health")[1]["ready"] is True, "ready")
            with spine_web(home, gateway) as web:
                yield web
        finally:
            stop(gateway_process)
    finally:
        stop(node)


def test_market_first_render_of_5000_candles(benchmark: BenchmarkFixture, browser: Any, imported: str) -> None:
    drawn: list[float] = []

    def one_round() -> int:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        try:
            page.goto(f"{imported}/#market?instrument_id={IID}")
            page.wait_for_function(
                "() => document.getElementById('chart') && document.getElementById('chart').dataset.drawnMs",
                timeout=60_000,
            )
            drawn.append(float(page.evaluate("() => document.getElementById('chart').dataset.drawnMs")))
            return int(page.evaluate("() => marketChart.candles.data().length"))
        finally:
            page.close()

    benchmark.group = "ui: the market page"
    candles = benchmark.pedantic(one_round, rounds=ROUNDS, iterations=1, warmup_rounds=0)
    assert candles == 5_000
    benchmark.extra_info["drawn_ms_median"] = sorted(drawn)[len(drawn) // 2]


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """A simulated venue at 600x, a gateway and ``spine web``: the node's URL and the web's."""
    home = tmp_path_factory.mktemp("ui-live")
    (home / "node").mkdir()
    with running_node(home / "node", warm_bars=100) as node:
        process, gateway = spawn_gateway(home / "gateway", [node], f"http://127.0.0.1:{free_port()}")
        try:
            wait_for(process, lambda: get(gateway + "/v2/health")[1]["ready"] is True, "ready")
            with spine_web(home, gateway) as web:
                yield node, web
        finally:
            stop(process)


#: In a page on the node's own origin: each 1-minute bar's arrival from the node's stream.
DIRECT = """(url) => {
  window.direct = {};
  const stream = new EventSource(url);
  stream.addEventListener('bar', (event) => {
    for (const bar of JSON.parse(event.data).bars) {
      if (!(bar.ts_event in window.direct)) window.direct[bar.ts_event] = Date.now();
    }
  });
}"""


def test_a_bars_way_from_the_node_to_the_page(benchmark: BenchmarkFixture, browser: Any, live: tuple[str, str]) -> None:
    node, web = live
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    delays: list[float] = []

    def watch() -> list[float]:
        # Both clocks are the browser's: a page on the node's origin reads the node's stream, the
        # UI's page the same bars through the gateway and the proxy.
        direct = browser.new_page()
        try:
            direct.goto(f"{node}/v2/health")
            direct.evaluate(DIRECT, "/v2/stream/bars?instrument_id=BTCUSDT.SIM&resolution=1m")
            page.goto(f"{web}/#market?instrument_id=BTCUSDT.SIM")
            page.wait_for_function(
                "() => document.getElementById('chart') && document.getElementById('chart').dataset.drawnMs",
                timeout=60_000,
            )
            page.wait_for_timeout(SECONDS * 1000)
            first = dict(direct.evaluate("() => window.direct"))
            shown = dict(page.evaluate("() => market.arrivals"))
        finally:
            direct.close()
        delays[:] = sorted(shown[ts] - first[ts] for ts in shown if ts in first)
        return delays

    benchmark.group = "ui: a bar's way to the page"
    try:
        benchmark.pedantic(watch, rounds=1, iterations=1, warmup_rounds=0)
    finally:
        page.close()
    assert len(delays) >= 5, delays
    benchmark.extra_info["bars"] = len(delays)
    benchmark.extra_info["delay_ms_median"] = round(delays[len(delays) // 2], 1)
    benchmark.extra_info["delay_ms_p95"] = round(delays[int(len(delays) * 0.95)], 1)
