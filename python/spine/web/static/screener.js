// The Screener page: the live feature table from /v2/stream/screener (each `row` replaces an
// instrument's row, each `delta` upserts or retires its keys), ABSENT cells shown with their
// reason (never as 0 or blank), and a screen builder posting /v2/screener/screen (a
// point-in-time screen with `as_of`). Values are shown as the screener served them.
"use strict";

const screener = { stream: null, rows: new Map(), keys: new Set(), resolution: "5m" };
const SCREENER_RESOLUTIONS = ["1m", "5m", "15m", "30m", "1h", "4h", "1d"];
const EXAMPLE_SCREEN = {
  version: "spine.v2", schema_id: "svc.screen_definition", schema_version: 1,
  resolutions: ["5m"], instrument_ids: null,
  filter: { all: [{ key: "rsi_14.value", op: "IS_NOT_ABSENT" }] },
  sort: [{ key: "rsi_14.value", direction: "DESC" }], limit: 20, as_of: null,
};

PAGES.screener = { title: "Screener", render: renderScreener, leave: closeScreenerStream };

function closeScreenerStream() {
  if (screener.stream) screener.stream.close();
  screener.stream = null;
}

async function renderScreener(page) {
  const wanted = new URLSearchParams(location.hash.split("?")[1] || "").get("instrument_id");
  if (wanted) return renderScreenerInstrument(page, wanted);
  const health = await engine("/v2/screener/health");
  const resolution = el("select", { id: "screener-resolution" }, ...SCREENER_RESOLUTIONS.map((r) => el("option", { value: r }, r)));
  resolution.value = screener.resolution;
  page.append(
    el("p", {}, `Screener ${health.process_state}; processed ${health.processed}, dropped ${health.dropped}`),
    el("div", { class: "controls" }, "Resolution ", resolution),
    el("div", { id: "screener-table" }, el("p", {}, "Waiting for the screener's rows...")),
    screenBuilder(),
  );
  resolution.addEventListener("change", () => {
    screener.resolution = resolution.value;
    followScreener();
  });
  followScreener();
}

function followScreener() {
  closeScreenerStream();
  screener.rows = new Map();
  screener.keys = new Set();
  const stream = new EventSource(`${ENGINE}/v2/stream/screener?resolution=${screener.resolution}`);
  screener.stream = stream;
  stream.addEventListener("row", (event) => {
    const row = JSON.parse(event.data);
    if (row.resolution !== screener.resolution) return;
    screener.rows.set(row.instrument_id, { ts_event: row.ts_event, values: { ...row.values } });
    for (const key of Object.keys(row.values)) screener.keys.add(key);
    drawScreener(row.instrument_id, null);
  });
  stream.addEventListener("delta", (event) => {
    const delta = JSON.parse(event.data);
    const row = screener.rows.get(delta.instrument_id);
    if (!row || delta.resolution !== screener.resolution) return;
    row.ts_event = delta.ts_event;
    for (const op of delta.operations) {
      if (op.op === "UPSERT") {
        row.values[op.key] = op.value;
        screener.keys.add(op.key);
      } else if (op.op === "RETIRE") {
        delete row.values[op.key];
      }
    }
    drawScreener(delta.instrument_id, delta.operations.map((op) => op.key));
  });
}

function cellText(value) {
  if (value === undefined) return "retired";
  if (value.kind === "ABSENT") {
    const progress = value.bars_needed ? ` (${value.bars_seen}/${value.bars_needed})` : "";
    return `ABSENT ${value.reason}${progress}`;
  }
  return value.value;
}

function drawScreener(changedInstrument, changedKeys) {
  const target = document.getElementById("screener-table");
  if (!target) return;
  const keys = [...screener.keys].sort();
  const ids = [...screener.rows.keys()].sort();
  const updated = Number(target.dataset.updates || 0) + (changedKeys ? 1 : 0);
  const rows = ids.map((id) => {
    const row = screener.rows.get(id);
    const cells = keys.map((key) => {
      const value = row.values[key];
      const changed = id === changedInstrument && changedKeys && changedKeys.includes(key);
      return el("td", { class: value && value.kind === "ABSENT" ? "absent" : changed ? "changed" : "", "data-key": key }, cellText(value));
    });
    const link = el("a", { href: `#screener?instrument_id=${encodeURIComponent(id)}&resolution=${screener.resolution}` }, id);
    return [el("td", {}, link), el("td", {}, row.ts_event), ...cells];
  });
  target.replaceChildren(table(["instrument", "bar close", ...keys], rows));
  target.dataset.updates = String(updated);
}

function screenBuilder() {
  const body = el("textarea", { id: "screen-body", rows: "12", cols: "90" });
  body.value = JSON.stringify(EXAMPLE_SCREEN, null, 2);
  const answer = el("div", { id: "screen-answer" });
  const button = el("button", { id: "screen-run" }, "Run screen");
  button.addEventListener("click", async () => {
    const response = await fetch(ENGINE + "/v2/screener/screen", { method: "POST", headers: { "content-type": "application/json" }, body: body.value });
    const result = await response.json();
    if (!response.ok) return answer.replaceChildren(el("p", { class: "refused" }, result.error.detail));
    const keys = [...new Set(result.rows.flatMap((r) => Object.keys(r.values)))].sort();
    answer.replaceChildren(
      el("p", {}, `as of ${result.as_of}: ${result.matched} of ${result.evaluated} matched`),
      table(["rank", "instrument", "resolution", ...keys], result.rows.map((r) => [r.rank, r.instrument_id, r.resolution, ...keys.map((k) => cellText(r.values[k]))])),
    );
  });
  return el("div", {}, el("h2", {}, "Screen (a svc.screen_definition; set as_of for a point-in-time screen)"), body, el("br"), button, answer);
}

// One instrument: its confluence vote over the timeframes, its feature states, and the pattern
// observations at a resolution drawn as markers on its candles.
async function renderScreenerInstrument(page, instrument) {
  const resolution = new URLSearchParams(location.hash.split("?")[1]).get("resolution") || screener.resolution;
  const view = await engine(`/v2/screener/instrument/${encodeURIComponent(instrument)}`);
  const observations = (await engine(`/v2/screener/observations?instrument_id=${encodeURIComponent(instrument)}&resolution=${resolution}&limit=1000`)).items;
  const vote = view.confluence;
  page.append(
    el("p", {}, el("a", { href: "#screener" }, "All instruments")),
    el("h2", {}, `${instrument} at ${resolution}`),
    el("div", { id: "confluence" }, table(
      ["timeframe", "voting", "trend", "momentum"],
      [...vote.timeframes.map((t) => [t.resolution, t.voting, t.trend, t.momentum]), ["all", vote.voting, vote.trend, vote.momentum]],
    )),
    table(["resolution", "bars folded", "warm", "absent", "as of"], view.states.map((s) => [s.resolution, s.bars_folded, s.warm, s.absent, s.ts_event])),
    el("div", { id: "observed-chart", style: "height: 420px" }),
    el("h3", {}, "Pattern observations"),
    table(["close", "pattern", "direction"], observations.map((o) => [o.ts_event, o.pattern, o.direction])),
  );
  const bars = (await engine(`/v2/bars?bar_type=${encodeURIComponent(barType(instrument, resolution))}&limit=5000`)).bars;
  const target = document.getElementById("observed-chart");
  const chart = LightweightCharts.createChart(target, { height: 420, timeScale: { timeVisible: true } });
  const series = chart.addCandlestickSeries();
  series.setData(bars.map(candle));
  // Markers need a candle: an observation is drawn on the bar that closed when it was made.
  const closes = new Set(bars.map((b) => b.ts_event));
  const drawn = observations.filter((o) => closes.has(o.ts_event)).sort((a, b) => (BigInt(a.ts_event) < BigInt(b.ts_event) ? -1 : 1));
  series.setMarkers(drawn.map((o) => ({
    time: chartTime(o.ts_event), position: o.direction === "DOWN" ? "aboveBar" : "belowBar",
    color: o.direction === "DOWN" ? "#b42318" : "#1a7f37", shape: o.direction === "DOWN" ? "arrowDown" : "arrowUp", text: o.pattern,
  })));
  chart.timeScale().fitContent();
  target.dataset.markers = String(series.markers().length);
  screener.instrumentSeries = series;
}
