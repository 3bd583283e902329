"""The UI in a real browser: Debian's chromium driven by playwright (no browser download),
against a venue node, a gateway and ``spine web`` on loopback. Each page loads without a
console error; the market chart's candles are the ``/v2/bars`` page's, and live bars reach it;
on a public-readonly host a forced mutation through the proxy is refused; with the gateway
stopped the page says the backend is unavailable. A screenshot of each page is kept in the
test's directory."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browsers import chromium
from gateways import save_strategy, spawn_gateway, template_gateway
from nodes import get, post, running_node, stop, wait_for
from screeners import spawn_screener
from ups import running_up
from webs import spine_web
from workers import real_worker, running_workers

WAIT_MS = 60_000


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, Any]]:
    """A node at 600x, a screener over it, a public-readonly gateway over both, ``spine web``
    in front; the gateway's and the web server's URLs and the gateway's process."""
    home = tmp_path_factory.mktemp("browser")
    (home / "node").mkdir()
    with running_node(home / "node", warm_bars=300) as node:
        screening, screener = spawn_screener(home / "screener", node)
        process, gateway = spawn_gateway(home / "gateway", [node], screener)
        try:
            wait_for(process, lambda: get(gateway + "/v2/health")[1]["ready"] is True, "ready")
            wait_for(screening, lambda: get(screener + "/v2/screener/health")[0] == 200, "the screener answering")
            with spine_web(home, gateway) as web:
                yield gateway, web, process
        finally:
            if process.poll() is None:
                stop(process)
            stop(screening)


@pytest.fixture
def view(browser: Any, tmp_path: Path) -> Iterator[Page]:
    """A page of its own for one test, closed after it (an open page holds its streams open,
    and a server stopping waits for them)."""
    opened = Page(browser, tmp_path)
    try:
        yield opened
    finally:
        if not opened.page.is_closed():
            opened.page.close()


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


def test_the_market_chart_is_the_bars_page_and_follows_live_bars(view: Page, stack: tuple[str, str, Any]) -> None:
    gateway, web, _ = stack
    page = view.page
    page.goto(web + "/#market?instrument_id=BTCUSDT.SIM")
    page.wait_for_function(
        "() => document.getElementById('chart') && document.getElementById('chart').dataset.synced", timeout=WAIT_MS
    )
    # One look at the page's bars and the chart's candles together (live bars keep arriving).
    seen = page.evaluate("() => ({bars: market.bars, candles: marketChart.candles.data()})")
    shown, drawn = seen["bars"], seen["candles"]
    served = get(gateway + "/v2/bars?bar_type=BTCUSDT.SIM-1-MINUTE-LAST-EXTERNAL&limit=5000")[1]["bars"]
    by_close = {bar["ts_event"]: bar for bar in served}
    assert len(shown) >= 30
    assert all(by_close[bar["ts_event"]] == bar for bar in shown if bar["ts_event"] in by_close)
    assert [bar["ts_event"] for bar in shown][: len(served)] == [bar["ts_event"] for bar in served][: len(shown)]
    assert drawn == [candle(bar) for bar in shown]
    # Live: the stream's bars reach the chart (the venue runs at 600x: a bar every 0.1 s).
    page.wait_for_function("() => Number(document.getElementById('chart').dataset.live || 0) >= 3", timeout=WAIT_MS)
    later = page.evaluate("() => market.bars")
    assert int(later[-1]["ts_event"]) > int(shown[-1]["ts_event"])
    page.select_option("#resolution", "5m")
    page.wait_for_function(
        "() => document.getElementById('chart').dataset.series.endsWith('5-MINUTE-LAST-EXTERNAL')", timeout=WAIT_MS
    )
    five = page.evaluate("() => market.bars")
    served = get(gateway + "/v2/bars?bar_type=BTCUSDT.SIM-5-MINUTE-LAST-EXTERNAL&limit=5000")[1]["bars"]
    by_close = {bar["ts_event"]: bar for bar in served}
    assert five and all(by_close[bar["ts_event"]] == bar for bar in five if bar["ts_event"] in by_close)
    view.shot("market")
    # A bucket the backend withheld is shaded and named with its reason, as served. At 1h the
    # first bucket is all but surely partly observed (the node's history starts where its
    # hydration ran) and the newest one still open.
    page.select_option("#resolution", "1h")
    page.wait_for_function(
        "() => document.getElementById('chart').dataset.series.endsWith('1-HOUR-LAST-EXTERNAL')", timeout=WAIT_MS
    )
    marked = page.evaluate(
        "() => ({withheld: market.withheld, columns: marketChart.withheld.data(),"
        " markers: marketChart.withheld.markers()})"
    )
    served_withheld = get(gateway + "/v2/bars?bar_type=BTCUSDT.SIM-1-HOUR-LAST-EXTERNAL&limit=5000")[1]["withheld"]
    assert marked["withheld"] and marked["withheld"][0] == served_withheld[0]
    assert [c["time"] for c in marked["columns"]] == [int(w["end"]) // 10**9 for w in marked["withheld"]]
    assert [m["text"] for m in marked["markers"]] == [w["reason"] for w in marked["withheld"]]
    assert view.errors == []


def candle(bar: dict[str, str]) -> dict[str, Any]:
    """A served bar as the chart draws it: its close in whole seconds, its prices as numbers."""
    return {
        "time": int(bar["ts_event"]) // 10**9,
        **{key: float(bar[key]) for key in ("open", "high", "low", "close")},
    }


def test_the_health_page_and_a_refused_mutation(view: Page, stack: tuple[str, str, Any]) -> None:
    _, web, _ = stack
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


@pytest.fixture(scope="module")
def operator_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """A private-operator gateway (the ema_cross template saved as ``ema``), two workers with the
    study tests' stand-in runner, and a private-operator ``spine web``; the gateway's and the
    web server's URLs."""
    home = tmp_path_factory.mktemp("operator")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "jobs"))
    with template_gateway(home / "gateway", "study_poll_secs = 0.05\n") as gateway:
        with running_workers(home, f"sqlite:///{home / 'gateway' / 'spine.db'}") as workers:
            for name in ("w1", "w2"):
                workers.start(name, SPINE_WORKER_RUNNER="study_fake_runner:run")
            with spine_web(home, gateway, "private-operator") as web:
                yield gateway, web


STUDY = {
    "strategy_id": "ema",
    "search": {"fast": {"low": 2, "high": 12}, "slow": {"low": 10, "high": 30}},
    "objective": {"metric": "total_pnl"},
    "trials": 6,
    "parallel": 2,
    "training": {"start": "1704067200000000000", "end": "1706745599999999999"},
    "holdout": {"start": "1706745600000000000", "end": "1709251199999999999"},
}


def test_a_study_created_and_followed_in_the_ui(view: Page, operator_stack: tuple[str, str]) -> None:
    gateway, web = operator_stack
    page = view.page
    page.goto(web + "/#studies")
    page.wait_for_selector("#study-create", timeout=WAIT_MS)
    page.fill("#study-body", json.dumps(STUDY))
    page.click("#study-create")
    page.wait_for_function("() => location.hash.includes('study_id=')", timeout=WAIT_MS)
    study_id = page.evaluate("() => new URLSearchParams(location.hash.split('?')[1]).get('study_id')")
    page.wait_for_selector("text=COMPLETED", timeout=WAIT_MS)
    trials = get(f"{gateway}/v2/studies/{study_id}/trials")[1]["items"]
    plotted = page.evaluate("() => document.getElementById('history').data[0]")
    assert plotted["x"] == [t["trial"] for t in trials] and plotted["y"] == [t["value"] for t in trials]
    rows = page.evaluate("() => document.querySelectorAll('table')[2].rows.length")
    assert rows == 1 + len(trials)
    page.click("#study-holdout")
    page.wait_for_selector("#holdout", timeout=WAIT_MS)
    page.click("#study-promote")
    page.wait_for_selector("#promoted", timeout=WAIT_MS)
    head = get(gateway + "/v2/strategies/ema")[1]["head_revision_id"]
    assert head in page.inner_text("#promoted")
    view.shot("studies")
    assert view.errors == []


def test_a_public_host_withholds_every_operator_control(
    view: Page, stack: tuple[str, str, Any], tmp_path: Path
) -> None:
    _, web, _ = stack
    page = view.page
    page.goto(web + "/#studies")
    page.wait_for_selector("#page table", timeout=WAIT_MS)
    assert page.query_selector("#study-create") is None and page.query_selector("#study-body") is None
    page.goto(web + "/#health")
    page.wait_for_selector("text=Workers", timeout=WAIT_MS)
    assert page.query_selector("button") is None  # no page here offers an action
    assert view.errors == []


def test_the_screener_table_follows_its_stream_and_a_screen_runs(view: Page, stack: tuple[str, str, Any]) -> None:
    gateway, web, _ = stack
    page = view.page
    page.goto(web + "/#screener")
    page.wait_for_selector("#screener-table table", timeout=WAIT_MS)
    # A delta updates its cells in place (the venue runs at 600x: bars, and so deltas, keep coming).
    page.wait_for_function(
        "() => Number(document.getElementById('screener-table').dataset.updates || 0) >= 2", timeout=WAIT_MS
    )
    page.wait_for_selector("#screener-table td.changed", timeout=WAIT_MS)  # a delta's cells, marked
    cells = page.eval_on_selector_all("#screener-table td[data-key]", "cells => cells.map(c => c.textContent)")
    assert cells and all(text.strip() for text in cells)  # never blank
    assert all(
        text.startswith("ABSENT ")
        for text in page.eval_on_selector_all("#screener-table td.absent", "cells => cells.map(c => c.textContent)")
    )
    page.click("#screen-run")
    page.wait_for_selector("#screen-answer p", timeout=WAIT_MS)
    assert "matched" in page.inner_text("#screen-answer p")
    view.shot("screener")
    # One instrument: its confluence vote as served, its observations as markers on its candles.
    page.goto(web + "/#screener?instrument_id=BTCUSDT.SIM&resolution=1m")
    page.wait_for_function(
        "() => document.getElementById('observed-chart') && document.getElementById('observed-chart').dataset.markers",
        timeout=WAIT_MS,
    )
    served = get(gateway + "/v2/screener/instrument/BTCUSDT.SIM")[1]["confluence"]
    timeframes = page.eval_on_selector_all("#confluence tr", "rows => rows.slice(1).map(r => r.cells[0].textContent)")
    assert timeframes == [t["resolution"] for t in served["timeframes"]] + ["all"]
    markers = page.evaluate("() => screener.instrumentSeries.markers()")
    observed = get(gateway + "/v2/screener/observations?instrument_id=BTCUSDT.SIM&resolution=1m&limit=1000")[1]["items"]
    patterns = {(int(o["ts_event"]) // 10**9, o["pattern"]) for o in observed}
    assert {(m["time"], m["text"]) for m in markers} <= patterns
    view.shot("screener-instrument")
    assert view.errors == []


@pytest.fixture(scope="module")
def backtesting(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """A node at 600x, a private-operator gateway over it with the ema_cross template saved as
    ``ema``, a worker with the real runner on the node's catalog, a private-operator ``spine
    web``; the gateway's and the web server's URLs."""
    home = tmp_path_factory.mktemp("backtesting")
    (home / "node").mkdir()
    with running_node(home / "node", warm_bars=600) as node:
        process, gateway = spawn_gateway(home / "gateway", [node], node, SPINE_DEPLOYMENT_MODE="private-operator")
        try:
            wait_for(process, lambda: get(gateway + "/v2/health")[1]["ready"] is True, "ready")
            catalog = home / "node" / "data" / "catalog"
            wait_for(process, lambda: any((catalog / "external").rglob("*.parquet")), "a flushed catalog")
            save_strategy(gateway, "ema", get(gateway + "/v2/strategy-templates/ema_cross")[1]["files"])
            with real_worker(home, f"sqlite:///{home / 'gateway' / 'spine.db'}", [catalog]):
                with spine_web(home, gateway, "private-operator") as web:
                    yield gateway, web
        finally:
            stop(process)


def test_a_backtest_submitted_from_the_ui_reaches_its_report_and_markers(
    view: Page, backtesting: tuple[str, str], tmp_path: Path
) -> None:
    gateway, web = backtesting
    page = view.page
    page.goto(web + "/#strategies?strategy_id=ema")
    page.wait_for_selector("#backtest-submit", timeout=WAIT_MS)
    assert page.input_value("#file-editor") == get(gateway + "/v2/strategies/ema/files/strategy.toml")[1]["content"]
    bars = get(gateway + "/v2/bars?instrument_id=BTCUSDT.SIM&limit=5000")[1]["bars"]
    body = {"strategy_id": "ema", "parameters": {"fast": "3", "slow": "8"}, "end": bars[-40]["ts_event"]}
    page.fill("#backtest-body", json.dumps(body))
    page.click("#backtest-submit")
    page.wait_for_function("() => location.hash.includes('job_id=')", timeout=WAIT_MS)
    job_id = page.evaluate("() => new URLSearchParams(location.hash.split('?')[1]).get('job_id')")
    page.wait_for_function(
        "() => document.getElementById('report') && document.getElementById('report').dataset.ready === '1'",
        timeout=120_000,
    )
    assert "COMPLETED" in page.inner_text("#job-state")
    events = get(f"{gateway}/v2/backtests/{job_id}/events?limit=1000")[1]["items"]
    assert page.evaluate("() => document.querySelectorAll('#job-events tr').length") == 1 + len(events)
    page.wait_for_function("() => document.getElementById('run-chart').data", timeout=WAIT_MS)
    fills = outputs(gateway, job_id, "fills")
    plotted = page.evaluate("() => document.getElementById('run-chart').data")
    assert fills and plotted[1]["y"] == [f["last_px"] for f in fills]
    signals = [m for m in outputs(gateway, job_id, "markers") if m["kind"] == "SIGNAL"]
    assert signals and len(plotted[2]["x"]) == len(signals)  # every signal on the chart
    equity = outputs(gateway, job_id, "equity")
    assert page.evaluate("() => document.getElementById('equity').data[0].y") == [p["equity"] for p in equity]
    view.shot("backtest")
    assert view.errors == []


def test_a_save_on_a_moved_head_shows_its_conflict_and_a_save_on_the_head_lands(
    view: Page, backtesting: tuple[str, str]
) -> None:
    gateway, web = backtesting
    page = view.page
    page.goto(web + "/#strategies?strategy_id=ema")
    page.wait_for_selector("#save-revision", timeout=WAIT_MS)
    seen = get(gateway + "/v2/strategies/ema")[1]["head_revision_id"]
    # Someone else saves on the head the page read: the page's save is a conflict, nothing written.
    text = get(gateway + "/v2/strategies/ema/files/strategy.toml")[1]["content"]
    moved = save_on(gateway, seen, text + "# elsewhere\n")
    page.fill("#file-editor", page.input_value("#file-editor") + "# from the UI\n")
    page.fill("#save-message", "from the UI")
    page.click("#save-revision")
    page.wait_for_selector("#conflict", timeout=WAIT_MS)
    assert moved in page.inner_text("#conflict") and "strategy.toml" in page.inner_text("#conflict")
    assert get(gateway + "/v2/strategies/ema")[1]["head_revision_id"] == moved
    # On the head it read now, the save lands: the page shows the new head.
    page.reload()
    page.wait_for_selector("#save-revision", timeout=WAIT_MS)
    page.fill("#file-editor", page.input_value("#file-editor") + "# from the UI\n")
    page.click("#save-revision")
    page.wait_for_function(
        f"() => (h => h && !h.textContent.includes('{moved[:12]}'))(document.getElementById('project-head'))",
        timeout=WAIT_MS,
    )
    head = get(gateway + "/v2/strategies/ema")[1]["head_revision_id"]
    assert head != moved and head[:12] in page.inner_text("#project-head")
    assert get(gateway + "/v2/strategies/ema/files/strategy.toml")[1]["content"].endswith("# from the UI\n")
    assert view.errors == [f"409 {web}/api/engine/v2/strategies", CONSOLE_409], view.errors


CONSOLE_409 = "Failed to load resource: the server responded with a status of 409 (Conflict)"


def save_on(gateway: str, parent: str, text: str) -> str:
    """Save ``text`` as ``strategy.toml`` of ``ema`` on ``parent``; the new head."""
    status, revision = post(
        gateway + "/v2/strategies",
        {
            "version": "spine.v2",
            "schema_id": "svc.strategy_revision_save_request",
            "schema_version": 2,
            "strategy_id": "ema",
            "parent_revision_id": parent,
            "message": "elsewhere",
            "files": [{"path": "strategy.toml", "content": text}],
        },
    )
    assert status == 201, revision
    return str(revision["revision_id"])


def outputs(gateway: str, job_id: str, part: str) -> list[Any]:
    """Every document of a run's output part, page after page."""
    url = f"{gateway}/v2/backtests/{job_id}/outputs/{part}?limit=1000"
    page = get(url)[1]
    items = list(page["items"])
    while page["next_cursor"]:
        page = get(f"{url}&cursor={page['next_cursor']}")[1]
        items += page["items"]
    return items


def test_the_ui_of_spine_up(view: Page, tmp_path: Path) -> None:
    """``spine up``'s own UI (its URL from up.json): the market chart over the stack's node is
    the gateway's bars page, and the public-readonly page offers no action."""
    with running_up(tmp_path) as up:
        urls = up.urls()
        page = view.page
        page.goto(urls["web"] + "#market?instrument_id=BTCUSDT.SIM")
        page.wait_for_function(
            "() => document.getElementById('chart') && document.getElementById('chart').dataset.series",
            timeout=WAIT_MS,
        )
        shown = page.evaluate("() => market.bars")
        served = get(urls["gateway"] + "/v2/bars?bar_type=BTCUSDT.SIM-1-MINUTE-LAST-EXTERNAL&limit=5000")[1]["bars"]
        by_close = {bar["ts_event"]: bar for bar in served}
        assert shown and all(by_close[bar["ts_event"]] == bar for bar in shown if bar["ts_event"] in by_close)
        assert page.inner_text("#mode") == "mode: public-readonly" and page.query_selector("button") is None
        view.page.close()  # before spine up stops its web server
        assert up.stop() == 0, up.text()
    assert view.errors == []


def test_a_stopped_gateway_shows_unavailable(view: Page, stack: tuple[str, str, Any]) -> None:
    """Last in this module: it stops the gateway."""
    _, web, process = stack
    stop(process)
    page = view.page
    page.goto(web + "/#health")
    page.wait_for_selector("#unavailable", timeout=WAIT_MS)
    assert "Backend unavailable" in page.inner_text("#unavailable")
    view.shot("unavailable")
    # The failed fetches are the browser's own console errors (502s); nothing else failed.
    assert all("502" in error for error in view.errors), view.errors
