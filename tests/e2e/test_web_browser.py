"""The UI in a real browser: Debian's chromium driven by playwright (no browser download),
against a venue node, a gateway and ``spine web`` on loopback. Each page loads without a
console error; the market chart's candles are the ``/v2/bars`` page's, and live bars reach it;
on a public-readonly host a forced mutation through the proxy is refused; with the gateway
stopped the page says the backend is unavailable. A screenshot of each page is kept in the
test's directory."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gateways import spawn_gateway
from nodes import free_port, get, running_node, stop, wait_for
from test_web import spine_web

CHROMIUM = "/usr/bin/chromium"
WAIT_MS = 60_000


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if shutil.which("chromium") is None and not Path(CHROMIUM).exists():
        pytest.skip("chromium is not installed (scripts/setup.sh installs Debian's chromium when run as root)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, Any]]:
    """A node at 600x, a public-readonly gateway over it, ``spine web`` in front; the gateway's
    and the web server's URLs and the gateway's process."""
    home = tmp_path_factory.mktemp("browser")
    dead = f"http://127.0.0.1:{free_port()}"
    (home / "node").mkdir()
    with running_node(home / "node", warm_bars=300) as node:
        process, gateway = spawn_gateway(home / "gateway", [node], dead)
        try:
            wait_for(process, lambda: get(gateway + "/v2/health")[1]["ready"] is True, "ready")
            with spine_web(home, gateway) as web:
                yield gateway, web, process
        finally:
            if process.poll() is None:
                stop(process)


class Page:
    """A browser page that records its console errors and uncaught exceptions."""

    def __init__(self, browser: Any, shots: Path) -> None:
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.errors: list[str] = []
        self.shots = shots
        self.page.on("console", lambda message: self.errors.append(message.text) if message.type == "error" else None)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on(
            "response",
            lambda response: (
                self.errors.append(f"{response.status} {response.url}") if response.status >= 400 else None
            ),
        )

    def shot(self, name: str) -> None:
        self.shots.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(self.shots / f"{name}.png"), full_page=True)


def test_the_market_chart_is_the_bars_page_and_follows_live_bars(
    browser: Any, stack: tuple[str, str, Any], tmp_path: Path
) -> None:
    gateway, web, _ = stack
    view = Page(browser, tmp_path)
    page = view.page
    page.goto(web + "/#market?instrument_id=BTCUSDT.SIM")
    page.wait_for_function(
        "() => document.getElementById('chart') && document.getElementById('chart').data", timeout=WAIT_MS
    )
    # One look at the chart's series and its trace together (live bars keep arriving).
    seen = page.evaluate("() => ({bars: market.bars, trace: document.getElementById('chart').data[0]})")
    shown, trace = seen["bars"], seen["trace"]
    served = get(gateway + "/v2/bars?bar_type=BTCUSDT.SIM-1-MINUTE-LAST-EXTERNAL&limit=5000")[1]["bars"]
    by_close = {bar["ts_event"]: bar for bar in served}
    assert len(shown) >= 30
    assert all(by_close[bar["ts_event"]] == bar for bar in shown if bar["ts_event"] in by_close)
    assert [bar["ts_event"] for bar in shown][: len(served)] == [bar["ts_event"] for bar in served][: len(shown)]
    assert trace["type"] == "candlestick"
    assert trace["close"] == [bar["close"] for bar in shown] and trace["open"] == [bar["open"] for bar in shown]
    # Live: the stream's bars reach the chart (the venue runs at 600x: a bar every 0.1 s).
    page.wait_for_function("() => Number(document.getElementById('chart').dataset.live || 0) >= 3", timeout=WAIT_MS)
    later = page.evaluate("() => market.bars")
    assert int(later[-1]["ts_event"]) > int(shown[-1]["ts_event"])
    page.select_option("#resolution", "5m")
    page.wait_for_function(
        "() => document.getElementById('chart').data[0].name.endsWith('5-MINUTE-LAST-EXTERNAL')", timeout=WAIT_MS
    )
    five = page.evaluate("() => market.bars")
    served = get(gateway + "/v2/bars?bar_type=BTCUSDT.SIM-5-MINUTE-LAST-EXTERNAL&limit=5000")[1]["bars"]
    by_close = {bar["ts_event"]: bar for bar in served}
    assert five and all(by_close[bar["ts_event"]] == bar for bar in five if bar["ts_event"] in by_close)
    view.shot("market")
    assert view.errors == []


def test_the_health_page_and_a_refused_mutation(browser: Any, stack: tuple[str, str, Any], tmp_path: Path) -> None:
    _, web, _ = stack
    view = Page(browser, tmp_path)
    page = view.page
    page.goto(web + "/#health")
    page.wait_for_selector("text=spine.studies.create", timeout=WAIT_MS)
    assert page.inner_text("#mode") == "mode: public-readonly"
    status = page.evaluate("async () => (await fetch('/api/engine/v2/backtests', {method: 'POST', body: '{}'})).status")
    assert status == 403
    for name in ("screener", "strategies", "studies"):
        page.goto(f"{web}/#{name}")
        page.wait_for_selector("table", timeout=WAIT_MS)
        view.shot(name)
    view.shot("health")
    # Only the forced refusal failed (its response, and the browser's console line for it).
    assert sorted(view.errors) == sorted(
        [
            f"403 {web}/api/engine/v2/backtests",
            "Failed to load resource: the server responded with a status of 403 (Forbidden)",
        ]
    ), view.errors


def test_a_stopped_gateway_shows_unavailable(browser: Any, stack: tuple[str, str, Any], tmp_path: Path) -> None:
    """Last in this module: it stops the gateway."""
    _, web, process = stack
    stop(process)
    view = Page(browser, tmp_path)
    page = view.page
    page.goto(web + "/#health")
    page.wait_for_selector("#unavailable", timeout=WAIT_MS)
    assert "Backend unavailable" in page.inner_text("#unavailable")
    view.shot("unavailable")
    # The failed fetches are the browser's own console errors (502s); nothing else failed.
    assert all("502" in error for error in view.errors), view.errors
    time.sleep(0)
