// The Spine UI: every request goes through this host's same-origin proxy (/api/engine/);
// every value shown is as the backend served it.
"use strict";

const ENGINE = "/api/engine";
const PAGES = {
  health: { title: "Health", render: renderHealth },
};

const ORDER = ["market", "screener", "strategies", "studies", "health"];

// The host's mode: operator-only controls stay withheld until it is positively private-operator.
let mode = null;

async function engine(path) {
  const response = await fetch(ENGINE + path, { headers: { accept: "application/json" } });
  const body = await response.json();
  if (!response.ok) throw new Error(body.error ? body.error.detail : response.status);
  return body;
}

// plotly (4.8 MB) is loaded on the first page that plots with it, not with the UI: the market
// page draws its candles with Lightweight Charts (docs/performance.md: its first render).
let plotly = null;

function needPlotly() {
  plotly = plotly || new Promise((resolve, reject) => {
    const script = el("script", { src: "/vendor/plotly.min.js" });
    script.addEventListener("load", () => resolve(window.Plotly));
    script.addEventListener("error", () => reject(new Error("plotly.min.js did not load")));
    document.head.append(script);
  });
  return plotly;
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  for (const child of children) node.append(child);
  return node;
}

function table(headers, rows) {
  const head = el("tr", {}, ...headers.map((h) => el("th", {}, h)));
  return el("table", {}, head, ...rows.map((row) => el("tr", {}, ...row.map((cell) => cell instanceof Node ? cell : el("td", {}, String(cell))))));
}

function unavailable(error) {
  return el("div", { class: "unavailable", id: "unavailable" }, "Backend unavailable: " + error.message);
}

async function renderHealth(page) {
  const [health, status, screener, registry] = await Promise.all(
    [engine("/v2/health"), engine("/v2/status"), engine("/v2/screener/health"), engine("/v2/registry")],
  );
  page.append(el("h2", {}, "Gateway"), table(["live", "ready", "degraded", "reasons", "mode"], [[health.live, health.ready, health.degraded, health.degraded_reasons.join(", "), health.deployment_mode]]));
  page.append(el("h2", {}, "Upstreams"), table(["name", "kind", "reachable", "venues", "last seen", "last error"], status.upstreams.map((u) => [u.name, u.kind, u.reachable, (u.venues || []).join(", "), u.last_seen ?? "", u.last_error ?? ""])));
  page.append(el("h3", {}, "Their streams into the gateway"), table(["upstream", "path", "connected", "connects", "events", "last error"], status.upstreams.flatMap((u) => u.streams.map((st) => [u.name, st.path, st.connected, st.connects, st.events, st.last_error ?? ""]))));
  page.append(el("h2", {}, "Screener"), table(["state", "processed", "dropped", "input lag (ns)", "last error"], [[screener.process_state, screener.processed, screener.dropped, screener.input_lag_nanos ?? "", screener.last_error ?? ""]]));
  page.append(el("h2", {}, "Workers"), table(["live workers", "queued", "running"], [[status.workers.live.length, status.workers.queued, status.workers.running]]));
  page.append(el("h2", {}, "Registry"), availability(registry.operations));
}

function availability(operations) {
  return table(["operation", "method", "path", "effect", "availability"], operations.map((op) => [op.id, op.method, op.path, op.effect, el("td", { class: op.availability }, op.availability)]));
}

async function renderPending(page, spec) {
  // A page still to come shows what the registry says of the routes it will use.
  const registry = await engine("/v2/registry");
  const wanted = registry.operations.filter((op) => spec.routes.includes(op.id));
  page.append(el("p", {}, "This page is not built yet; the routes it will use:"), availability(wanted));
}

let shown = null;

async function show(name) {
  const spec = PAGES[name] || PAGES.health;
  if (shown && shown.leave) shown.leave();
  shown = spec;
  for (const link of document.querySelectorAll("#pages a")) link.classList.toggle("current", link.dataset.page === name);
  const page = document.getElementById("page");
  page.replaceChildren(el("h1", {}, spec.title));
  try {
    await (spec.render ? spec.render(page) : renderPending(page, spec));
  } catch (error) {
    page.append(unavailable(error));
  }
}

async function resolveMode() {
  const badge = document.getElementById("mode");
  try {
    const response = await fetch("/api/mode");
    mode = (await response.json()).deployment_mode;
  } catch (error) {
    mode = null;
  }
  badge.textContent = "mode: " + (mode ?? "unresolved");
  badge.classList.toggle("operator", mode === "private-operator");
  document.body.dataset.mode = mode ?? "unresolved";
}

async function main() {
  const nav = document.getElementById("pages");
  for (const name of ORDER) nav.append(el("a", { href: "#" + name, "data-page": name }, PAGES[name].title));
  window.addEventListener("hashchange", () => show(location.hash.slice(1).split("?")[0]));
  // Operator-only controls are drawn only once the mode is known (withheld meanwhile).
  await resolveMode();
  show(location.hash.slice(1).split("?")[0] || "market");
}
