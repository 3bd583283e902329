"""The UI's chart library, chosen by measurement: 5,000 one-minute candles drawn, then 200 live
candles added one at a time, in Debian's chromium (playwright, headless), side by side:

- plotly: ``Plotly.react`` of a candlestick trace (the values as the wire's decimal strings),
  then ``Plotly.extendTraces`` per live candle; what ``spine web`` uses, served from the pinned
  plotly wheel;
- lightweight-charts: TradingView's library as the ``lightweight-charts`` Python package bundles
  it, ``series.setData`` (numbers; its time in seconds), then ``series.update`` per candle.

Timed in the page with ``performance.now()`` (the draw, the 200 updates); the round's wall time
is pytest-benchmark's. Rounds: ``SPINE_BENCH_CHART_ROUNDS`` (5; smoke 1).
"""

from __future__ import annotations

import os
import random
import sys
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "e2e"))

from browsers import chromium  # noqa: E402

CANDLES, LIVE = 5_000, 200
ROUNDS = int(os.environ.get("SPINE_BENCH_CHART_ROUNDS", "5"))
LIBRARIES = {
    "plotly": resources.files("plotly") / "package_data" / "plotly.min.js",
    "lightweight-charts": resources.files("lightweight_charts") / "js" / "lightweight-charts.js",
}
DRAW = {
    "plotly": """
(bars) => {
  const chart = document.createElement('div'); chart.style.height = '600px'; document.body.append(chart);
  const x = (b) => new Date(b.t * 1000);
  const start = performance.now();
  const first = bars.slice(0, %(candles)d);
  Plotly.react(chart, [{type: 'candlestick', x: first.map(x), open: first.map(b => b.o), high: first.map(b => b.h),
    low: first.map(b => b.l), close: first.map(b => b.c)}], {xaxis: {rangeslider: {visible: false}}});
  const drawn = performance.now();
  for (const b of bars.slice(%(candles)d)) {
    Plotly.extendTraces(chart, {x: [[x(b)]], open: [[b.o]], high: [[b.h]], low: [[b.l]], close: [[b.c]]}, [0]);
  }
  return {draw_ms: drawn - start, live_ms: performance.now() - drawn, points: chart.data[0].x.length};
}""",
    "lightweight-charts": """
(bars) => {
  const box = document.createElement('div');
  box.style.height = '600px'; box.style.width = '1200px'; document.body.append(box);
  const chart = LightweightCharts.createChart(box, {width: 1200, height: 600});
  const series = chart.addCandlestickSeries();
  const bar = (b) => ({time: b.t, open: Number(b.o), high: Number(b.h), low: Number(b.l), close: Number(b.c)});
  const start = performance.now();
  series.setData(bars.slice(0, %(candles)d).map(bar));
  const drawn = performance.now();
  for (const b of bars.slice(%(candles)d)) series.update(bar(b));
  return {draw_ms: drawn - start, live_ms: performance.now() - drawn, points: series.data().length};
}""",
}


def candles() -> list[dict[str, Any]]:
    """5,200 one-minute candles of a seeded walk, prices as decimal strings (as the wire serves)."""
    rng = random.Random(7)
    price, out = 60_000.0, []
    for n in range(CANDLES + LIVE):
        o = price
        c = max(1.0, o + rng.gauss(0, 25))
        h, low = max(o, c) + abs(rng.gauss(0, 10)), min(o, c) - abs(rng.gauss(0, 10))
        out.append({"t": 1_740_000_000 + 60 * n, "o": f"{o:.1f}", "h": f"{h:.1f}", "l": f"{low:.1f}", "c": f"{c:.1f}"})
        price = c
    return out


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


@pytest.mark.parametrize("library", list(LIBRARIES))
def test_chart_5000_candles_and_200_live(benchmark: BenchmarkFixture, browser: Any, library: str) -> None:
    bars = candles()
    draw = DRAW[library] % {"candles": CANDLES}
    timings: list[dict[str, float]] = []

    def one_round() -> dict[str, float]:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        try:
            page.add_script_tag(path=str(LIBRARIES[library]))
            result: dict[str, float] = page.evaluate(draw, bars)
        finally:
            page.close()
        timings.append(result)
        return result

    benchmark.group = f"chart: {CANDLES} candles drawn, then {LIVE} live"
    result = benchmark.pedantic(one_round, rounds=ROUNDS, iterations=1, warmup_rounds=0)
    assert result["points"] == CANDLES + LIVE
    draws = sorted(t["draw_ms"] for t in timings)
    lives = sorted(t["live_ms"] for t in timings)
    benchmark.extra_info["draw_ms_median"] = round(draws[len(draws) // 2], 1)
    benchmark.extra_info["live_ms_median"] = round(lives[len(lives) // 2], 1)
