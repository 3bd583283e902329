// The Market page: the instrument list and search, a candlestick chart of /v2/bars at a chosen
// resolution with its volume, the withheld buckets marked with their reason, the series'
// coverage and hydration, and live bars from /v2/stream/bars. The chart is TradingView's
// Lightweight Charts (benches/web/bench_charts.py: it draws 5,000 candles and takes live ones
// far faster than plotly); it plots numbers, and the legend shows the hovered bar's served
// strings exactly.
"use strict";

const RESOLUTIONS = { "1m": "1-MINUTE", "5m": "5-MINUTE", "15m": "15-MINUTE", "30m": "30-MINUTE", "1h": "1-HOUR", "4h": "4-HOUR", "1d": "1-DAY" };
//: The most candles the chart holds (the node serves its newest 5,000 minutes).
const MAX_CANDLES = 5000;
//: Pages of bars read at most for one chart.
const MAX_PAGES = 10;

// `arrivals`: when each live bar reached the page ([its close, Date.now()], the newest 1,000),
// read by benches/web/bench_ui.py to time a bar's way from the node to the chart.
const market = { stream: null, bars: [], withheld: [], arrivals: [] };

PAGES.market = { title: "Market", render: renderMarket, leave: closeMarketStream };

function closeMarketStream() {
  if (market.stream) market.stream.close();
  market.stream = null;
}

async function renderMarket(page) {
  const instruments = (await engine("/v2/instruments?limit=1000")).items;
  const select = el("select", { id: "instrument" }, ...instruments.map((i) => el("option", { value: i.instrument_id }, i.instrument_id)));
  const resolution = el("select", { id: "resolution" }, ...Object.keys(RESOLUTIONS).map((r) => el("option", { value: r }, r)));
  const search = el("input", { id: "search", placeholder: "search instruments", size: "16" });
  const found = el("span", { id: "found" });
  page.append(
    el("div", { class: "controls" }, "Instrument ", select, " resolution ", resolution, " ", search, found),
    el("div", { id: "legend", class: "legend" }),
    el("div", { id: "chart", style: "height: 520px" }),
    el("div", { id: "withheld" }),
    el("h2", {}, "Coverage"), el("div", { id: "coverage" }),
    el("h2", {}, "Hydration"), el("div", { id: "hydration" }),
  );
  search.addEventListener("change", () => searchInstruments(search.value, select, found));
  const redraw = () => showSeries(select.value, resolution.value).catch((error) => page.append(unavailable(error)));
  select.addEventListener("change", redraw);
  resolution.addEventListener("change", redraw);
  const wanted = new URLSearchParams(location.hash.split("?")[1] || "").get("instrument_id");
  if (wanted) select.value = wanted;
  if (select.value) await showSeries(select.value, resolution.value);
}

async function searchInstruments(text, select, found) {
  if (!text) return;
  const response = await fetch(ENGINE + "/v2/instruments/search", {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ text, limit: 50 }),
  });
  const result = await response.json();
  const items = response.ok ? result.items || result.instruments || [] : [];
  found.textContent = response.ok ? ` ${items.length} found` : " " + result.error.detail;
  if (items.length) select.value = items[0].instrument_id;
  select.dispatchEvent(new Event("change"));
}

function barType(instrument, resolution) {
  return `${instrument}-${RESOLUTIONS[resolution]}-LAST-EXTERNAL`;
}

async function readBars(instrument, resolution) {
  const type = encodeURIComponent(barType(instrument, resolution));
  let page = await engine(`/v2/bars?bar_type=${type}&limit=5000`);
  const bars = [...page.bars];
  let withheld = [...page.withheld];
  for (let n = 1; page.next_cursor && n < MAX_PAGES; n++) {
    page = await engine(`/v2/bars?bar_type=${type}&limit=5000&cursor=${encodeURIComponent(page.next_cursor)}`);
    bars.push(...page.bars);
    withheld.push(...page.withheld);
  }
  return { bars: bars.slice(-MAX_CANDLES), withheld, coverage: page.coverage };
}

async function showSeries(instrument, resolution) {
  closeMarketStream();
  marketChart.chart = null;
  const series = await readBars(instrument, resolution);
  market.bars = series.bars;
  market.withheld = series.withheld;
  drawChart(instrument, resolution);
  showCoverage(series.coverage);
  await showHydration(instrument);
  follow(instrument, resolution);
}

function nanosToDate(ns) {
  // Milliseconds for an axis only; the exact nanoseconds stay in the tables and hover text.
  return new Date(Number(BigInt(ns) / 1000000n));
}

function chartTime(ns) {
  // Lightweight Charts' time: whole seconds since the epoch (bars close on whole minutes).
  return Number(BigInt(ns) / 1000000000n);
}

//: The chart's parts, made once per series shown (lightweight-charts: TradingView's library).
const marketChart = { chart: null, candles: null, volume: null, withheld: null };

function drawChart(instrument, resolution) {
  // The chart library draws numbers; every value shown as text (the legend) is the served string.
  const target = document.getElementById("chart");
  if (!marketChart.chart || marketChart.target !== target) {
    target.replaceChildren();
    marketChart.target = target;
    marketChart.chart = LightweightCharts.createChart(target, { height: 520, timeScale: { timeVisible: true, secondsVisible: false } });
    marketChart.candles = marketChart.chart.addCandlestickSeries();
    marketChart.volume = marketChart.chart.addHistogramSeries({ priceScaleId: "volume", color: "#9aa7b8", priceFormat: { type: "volume" } });
    marketChart.chart.priceScale("volume").applyOptions({ scaleMargins: { top: 0.8, bottom: 0 } });
    marketChart.withheld = marketChart.chart.addHistogramSeries({ priceScaleId: "withheld", color: "rgba(245, 166, 35, 0.35)", lastValueVisible: false, priceLineVisible: false });
    marketChart.chart.priceScale("withheld").applyOptions({ visible: false, scaleMargins: { top: 0, bottom: 0 } });
    marketChart.chart.subscribeCrosshairMove((param) => legend(param));
  }
  marketChart.candles.setData(market.bars.map(candle));
  marketChart.volume.setData(market.bars.map((b) => ({ time: chartTime(b.ts_event), value: Number(b.volume) })));
  // A withheld bucket is a shaded column over its span, and a marker naming its reason.
  marketChart.withheld.setData(market.withheld.map((w) => ({ time: chartTime(w.end), value: 1 })));
  marketChart.withheld.setMarkers(market.withheld.map((w) => ({ time: chartTime(w.end), position: "aboveBar", color: "#8a4b00", shape: "square", text: w.reason })));
  marketChart.chart.timeScale().fitContent();
  target.dataset.series = barType(instrument, resolution);
  target.dataset.drawnMs = performance.now().toFixed(1);
  document.getElementById("withheld").replaceChildren(
    market.withheld.length
      ? table(["withheld from", "to", "reason"], market.withheld.map((w) => [w.start, w.end, w.reason]))
      : el("p", {}, "No bucket withheld in this range."),
  );
}

function candle(b) {
  return { time: chartTime(b.ts_event), open: Number(b.open), high: Number(b.high), low: Number(b.low), close: Number(b.close) };
}

function legend(param) {
  const line = document.getElementById("legend");
  if (!line || !param.time) return;
  const bar = market.bars.find((b) => chartTime(b.ts_event) === param.time);
  line.textContent = bar ? `close ${bar.ts_event}  O ${bar.open}  H ${bar.high}  L ${bar.low}  C ${bar.close}  V ${bar.volume}` : "";
}

function showCoverage(coverage) {
  const target = document.getElementById("coverage");
  if (!coverage) return target.replaceChildren(el("p", {}, "No coverage served."));
  target.replaceChildren(
    table(["bars", "newest close", "retention", "exhausted"], [[coverage.bar_count, coverage.newest_close ?? "", coverage.retention_state, coverage.exhausted]]),
    table(["observed from", "to"], coverage.observed.map((s) => [s.start, s.end])),
    table(["gap from", "to", "resolved"], coverage.gaps.map((g) => [g.start, g.end, g.resolved])),
  );
}

async function showHydration(instrument) {
  const target = document.getElementById("hydration");
  const response = await fetch(`${ENGINE}/v2/hydration/${encodeURIComponent(instrument)}`);
  const body = await response.json();
  if (!response.ok) return target.replaceChildren(el("p", {}, body.error.detail));
  const items = body.items || [body];
  target.replaceChildren(table(["state", "attempts", "last error"], items.map((h) => [h.state, h.attempts, h.last_error ?? ""])));
}

function follow(instrument, resolution) {
  const url = `${ENGINE}/v2/stream/bars?instrument_id=${encodeURIComponent(instrument)}&resolution=${resolution}&channel=EXTERNAL`;
  const stream = new EventSource(url);
  market.stream = stream;
  const target = document.getElementById("chart");
  delete target.dataset.synced;
  // Bars that closed between the page read and the stream's start reach neither: once the
  // stream is open, read what follows the page's last bar (`synced` says it is done).
  const through = market.bars.length ? market.bars[market.bars.length - 1].sequence : null;
  stream.addEventListener("open", () => fillGap(stream, instrument, resolution, through).finally(() => {
    target.dataset.synced = "1";
  }), { once: true });
  stream.addEventListener("bar", (event) => {
    const envelope = JSON.parse(event.data);
    if (envelope.bar_type !== barType(instrument, resolution)) return;
    for (const bar of envelope.bars) {
      market.arrivals.push([bar.ts_event, Date.now()]);
      if (market.arrivals.length > 1000) market.arrivals.shift();
      place(bar);
      marketChart.candles.update(candle(bar));
      marketChart.volume.update({ time: chartTime(bar.ts_event), value: Number(bar.volume) });
    }
    const chart = document.getElementById("chart");
    chart.dataset.live = String(Number(chart.dataset.live || 0) + 1);
  });
}

async function fillGap(stream, instrument, resolution, through) {
  if (through === null) return;
  const type = encodeURIComponent(barType(instrument, resolution));
  const page = await engine(`/v2/bars?bar_type=${type}&after_sequence=${through}&limit=5000`);
  if (market.stream !== stream || !page.bars.length) return; // another series is shown now
  for (const bar of page.bars) place(bar);
  marketChart.candles.setData(market.bars.map(candle));
  marketChart.volume.setData(market.bars.map((b) => ({ time: chartTime(b.ts_event), value: Number(b.volume) })));
}

function place(bar) {
  // A bar closing at a candle's time replaces it; any other goes where its close puts it
  // (live bars append; a gap's bars may land before a live one).
  const bars = market.bars;
  const ts = BigInt(bar.ts_event);
  let at = bars.length;
  while (at > 0 && BigInt(bars[at - 1].ts_event) > ts) at--;
  if (at > 0 && BigInt(bars[at - 1].ts_event) === ts) bars[at - 1] = bar;
  else bars.splice(at, 0, bar);
  if (bars.length > MAX_CANDLES) bars.splice(0, bars.length - MAX_CANDLES);
}
