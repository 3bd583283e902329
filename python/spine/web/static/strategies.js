// The Strategies page: projects, their files in an editor, revisions, the validation receipt
// with file and line; on a private-operator host, saving a revision (a moved head shows its
// conflict) and submitting a backtest. A job's page follows its STATE and LOG events live and
// then shows its report: statistics, the equity curve, orders and fills, and its fills and
// signals as markers on the price chart. Every value is as served.
"use strict";

const strategiesPage = { stream: null };

PAGES.strategies = { title: "Strategies", render: renderStrategies, leave: closeJobStream };

function closeJobStream() {
  if (strategiesPage.stream) strategiesPage.stream.close();
  strategiesPage.stream = null;
}

function hashParams() {
  return new URLSearchParams(location.hash.split("?")[1] || "");
}

async function renderStrategies(page) {
  const params = hashParams();
  if (params.get("job_id")) return renderJob(page, params.get("job_id"));
  if (params.get("strategy_id")) return renderProject(page, params.get("strategy_id"));
  const projects = (await engine("/v2/strategies?limit=100")).items;
  page.append(table(
    ["strategy", "name", "revisions", "head", "updated"],
    projects.map((p) => [el("td", {}, el("a", { href: `#strategies?strategy_id=${p.strategy_id}` }, p.strategy_id)),
      p.name, p.revisions, p.head_revision_id.slice(0, 12), p.updated_ts]),
  ));
}

async function renderProject(page, strategyId) {
  const base = `/v2/strategies/${strategyId}`;
  const [project, revisions, receipt, jobs] = await Promise.all([
    engine(base), engine(`${base}/revisions?limit=100`), engine(`${base}/validate`), engine(`/v2/backtests?strategy_id=${strategyId}&limit=50`),
  ]);
  const files = {};
  for (const file of project.files) files[file.path] = (await engine(`${base}/files/${file.path}`)).content;
  // One editor over the project's files: switching files keeps each one's edits.
  const picker = el("select", { id: "file-path" }, ...project.files.map((f) => el("option", { value: f.path }, f.path)));
  const editor = el("textarea", { id: "file-editor", rows: "24", cols: "100" });
  let path = picker.value;
  editor.value = files[path];
  picker.addEventListener("change", () => {
    files[path] = editor.value;
    path = picker.value;
    editor.value = files[path];
  });
  editor.addEventListener("input", () => { files[path] = editor.value; });
  if (!operator()) editor.setAttribute("readonly", "");
  page.append(
    el("p", {}, el("a", { href: "#strategies" }, "All strategies")),
    el("h2", { id: "project-head" }, `${project.name} (${strategyId}), head ${project.head_revision_id.slice(0, 12)}`),
    el("div", { class: "controls" }, "File ", picker), editor,
    el("h3", {}, receipt.valid ? "Valid" : "Not valid"),
    table(["file", "line", "severity", "message"], receipt.diagnostics.map((d) => [d.path, d.line ?? "", d.severity, d.message])),
  );
  if (operator()) page.append(saveForm(strategyId, project, files), backtestForm(strategyId));
  page.append(
    el("h3", {}, "Revisions"),
    table(["revision", "parent", "message", "created"], revisions.items.map((r) => [r.revision_id.slice(0, 12), (r.parent_revision_id || "").slice(0, 12), r.message, r.created_ts])),
    el("h3", {}, "Backtests"),
    table(["job", "state", "submitted"], jobs.items.map((j) => [el("td", {}, el("a", { href: `#strategies?job_id=${j.job_id}` }, j.job_id.slice(0, 12))), j.state, j.submitted_ts])),
  );
}

function saveForm(strategyId, project, files) {
  const message = el("input", { id: "save-message", placeholder: "what changed", size: "40" });
  const answer = el("div", { id: "save-answer" });
  const button = el("button", { id: "save-revision" }, "Save revision");
  button.addEventListener("click", async () => {
    const request = {
      version: "spine.v2", schema_id: "svc.strategy_revision_save_request", schema_version: 2,
      strategy_id: strategyId, parent_revision_id: project.head_revision_id, message: message.value,
      files: Object.entries(files).map(([p, content]) => ({ path: p, content })),
    };
    const response = await fetch(ENGINE + "/v2/strategies", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(request) });
    const body = await response.json();
    if (response.status === 201) return show("strategies");
    if (response.status === 409) {
      return answer.replaceChildren(el("p", { class: "refused", id: "conflict" }, `The head moved to ${body.head_revision_id}; changed on both sides: ${body.paths.join(", ")}; nothing saved`));
    }
    answer.replaceChildren(el("p", { class: "refused" }, body.error.detail));
  });
  return el("div", { class: "controls" }, message, button, answer);
}

function backtestForm(strategyId) {
  const body = el("textarea", { id: "backtest-body", rows: "4", cols: "100" });
  body.value = JSON.stringify({ strategy_id: strategyId, label: "from the UI" });
  const answer = el("div", { id: "backtest-answer" });
  const button = el("button", { id: "backtest-submit" }, "Run backtest");
  button.addEventListener("click", async () => {
    const response = await fetch(ENGINE + "/v2/backtests", { method: "POST", headers: { "content-type": "application/json" }, body: body.value });
    const receipt = await response.json();
    if (response.ok) location.hash = `strategies?job_id=${receipt.job_id}`;
    else answer.replaceChildren(el("p", { class: "refused" }, receipt.error.detail));
  });
  return el("div", {}, el("h3", {}, "Backtest (the POST /v2/backtests body)"), body, el("br"), button, answer);
}

async function renderJob(page, jobId) {
  const job = await engine(`/v2/backtests/${jobId}`);
  const events = el("div", { id: "job-events" });
  page.append(
    el("p", {}, el("a", { href: `#strategies?strategy_id=${job.strategy_id}` }, job.strategy_id)),
    el("h2", { id: "job-state" }, `Job ${jobId.slice(0, 12)}: ${job.state}`),
    events, el("div", { id: "report" }),
  );
  const lines = [];
  const stream = new EventSource(`${ENGINE}/v2/stream/backtests?job_id=${jobId}`);
  strategiesPage.stream = stream;
  const take = (event) => {
    const item = JSON.parse(event.data);
    lines.push([item.sequence, item.type, item.state ?? item.level, item.message ?? ""]);
    events.replaceChildren(table(["#", "type", "state / level", "message"], lines));
    if (item.type === "STATE") {
      document.getElementById("job-state").textContent = `Job ${jobId.slice(0, 12)}: ${item.state}`;
      if (["COMPLETED", "FAILED", "CANCELLED"].includes(item.state)) {
        closeJobStream();
        if (item.state === "COMPLETED") showReport(jobId).catch((error) => page.append(unavailable(error)));
      }
    }
  };
  stream.addEventListener("state", take);
  stream.addEventListener("log", take);
}

//: Pages of a run's output read at most (1,000 documents each).
const MAX_OUTPUT_PAGES = 50;

async function part(jobId, name) {
  let page = await engine(`/v2/backtests/${jobId}/outputs/${name}?limit=1000`);
  const items = [...page.items];
  for (let n = 1; page.next_cursor && n < MAX_OUTPUT_PAGES; n++) {
    page = await engine(`/v2/backtests/${jobId}/outputs/${name}?limit=1000&cursor=${encodeURIComponent(page.next_cursor)}`);
    items.push(...page.items);
  }
  return items;
}

async function showReport(jobId) {
  const [report, request] = await Promise.all([engine(`/v2/backtests/${jobId}/report`), engine(`/v2/backtests/${jobId}/request`)]);
  const [statistics, equity, orders, fills, markers] = await Promise.all(
    ["statistics", "equity", "orders", "fills", "markers"].map((name) => part(jobId, name)),
  );
  const stats = statistics[0];
  const target = document.getElementById("report");
  target.replaceChildren(
    el("h3", {}, "Report"),
    table(["run", "result hash", "ending balance", "total pnl", "orders", "fills"], [[report.run_id.slice(0, 12), report.result_hash.slice(0, 12), report.ending_balance, report.total_pnl, report.orders, report.fills]]),
    el("h3", {}, "Statistics"),
    table(["statistic", "value"], Object.entries(stats).filter(([k]) => !["version", "schema_id", "schema_version", "job_id", "run_id"].includes(k)).map(([k, v]) => [k, v ?? "null"])),
    el("div", { id: "equity", style: "height: 300px" }),
    el("div", { id: "run-chart", style: "height: 420px" }),
    el("h3", {}, "Orders"), table(["side", "quantity", "status", "ts"], orders.map((o) => [o.side, o.quantity, o.status, o.ts_last])),
    el("h3", {}, "Fills"), table(["side", "qty", "price", "commission", "ts"], fills.map((f) => [f.side, f.last_qty, f.last_px, f.commission, f.ts_event])),
  );
  await needPlotly();
  Plotly.react("equity", [{ type: "scatter", mode: "lines", name: "equity", x: equity.map((p) => nanosToDate(p.ts_event)), y: equity.map((p) => p.equity), text: equity.map((p) => p.equity), hoverinfo: "x+text" }],
    { title: { text: "Equity (marked to each bar close)" }, margin: { t: 40, r: 20, b: 30, l: 70 } }, { displaylogo: false });
  await runChart(report, request.run.resolution, fills, markers);
  target.dataset.ready = "1";
}

async function runChart(report, resolution, fills, markers) {
  // The run's bars as served at its resolution, its fills and signals as markers.
  const instrument = report.instruments[0];
  const type = encodeURIComponent(barType(instrument, resolution));
  const page = await engine(`/v2/bars?bar_type=${type}&start=${report.start}&end=${report.end}&limit=5000`);
  const bars = page.bars;
  const candles = { type: "candlestick", name: instrument, x: bars.map((b) => nanosToDate(b.ts_event)), open: bars.map((b) => b.open), high: bars.map((b) => b.high), low: bars.map((b) => b.low), close: bars.map((b) => b.close) };
  const fillMarks = { type: "scatter", mode: "markers", name: "fills", x: fills.map((f) => nanosToDate(f.ts_event)), y: fills.map((f) => f.last_px), text: fills.map((f) => `${f.side} ${f.last_qty} @ ${f.last_px}`), hoverinfo: "text", marker: { size: 10, symbol: fills.map((f) => f.side === "BUY" ? "triangle-up" : "triangle-down"), color: fills.map((f) => f.side === "BUY" ? "#1a7f37" : "#b42318") } };
  // A signal is drawn at its price, or (a marker without one) at the close of the bar it fired on.
  const closes = new Map(bars.map((b) => [b.ts_event, b.close]));
  const signals = markers.filter((m) => m.kind === "SIGNAL" && (m.price !== null || closes.has(m.ts_event)));
  const signalMarks = { type: "scatter", mode: "markers", name: "signals", x: signals.map((m) => nanosToDate(m.ts_event)), y: signals.map((m) => m.price ?? closes.get(m.ts_event)), text: signals.map((m) => `signal ${m.direction} at ${m.ts_event}`), hoverinfo: "text", yaxis: "y", marker: { size: 9, symbol: signals.map((m) => m.direction === "DOWN" ? "triangle-down-open" : "triangle-up-open"), color: "#6a5acd" } };
  Plotly.react("run-chart", [candles, fillMarks, signalMarks], { title: { text: "The run's bars, fills and signals" }, xaxis: { rangeslider: { visible: false } }, margin: { t: 40, r: 20, b: 30, l: 70 } }, { displaylogo: false });
}
