// The Studies page: the studies, one study's progress, trials (as they fill), best trial, an
// optimisation-history plot, the holdout beside training, and, on a private-operator host
// only, creating a study and its actions (pause, resume, cancel, retry, holdout, promote).
"use strict";

const studies = { timer: null };
//: How often a running study's page looks again (the backend has no study stream).
const STUDY_POLL_MS = 1000;

PAGES.studies = { title: "Studies", render: renderStudies, leave: stopStudyPolling };

function stopStudyPolling() {
  if (studies.timer) clearTimeout(studies.timer);
  studies.timer = null;
}

function operator() {
  return mode === "private-operator";
}

async function renderStudies(page) {
  const wanted = new URLSearchParams(location.hash.split("?")[1] || "").get("study_id");
  if (wanted) return renderStudy(page, wanted);
  const list = await engine("/v2/studies?limit=100");
  page.append(
    table(
      ["study", "strategy", "state", "trials", "best value", "label"],
      list.items.map((s) => [
        el("td", {}, el("a", { href: `#studies?study_id=${s.study_id}` }, s.study_id.slice(0, 12))),
        s.strategy_id, s.state, `${s.progress.complete}/${s.progress.target}`, s.best_value ?? "", s.definition.label ?? "",
      ]),
    ),
  );
  if (operator()) page.append(await createForm());
}

async function createForm() {
  const strategies = (await engine("/v2/strategies?limit=100")).items;
  const example = {
    strategy_id: strategies.length ? strategies[0].strategy_id : "my_ema",
    search: { fast: { low: 2, high: 20 }, slow: { low: 10, high: 60, step: 5 } },
    objective: { metric: "total_pnl", direction: "MAXIMIZE" },
    trials: 20, parallel: 2, sampler: { name: "TPE", seed: 42 },
    training: { start: "2025-01-01T00:00:00Z", end: "2025-01-20T23:59:59Z" },
  };
  const body = el("textarea", { id: "study-body", rows: "14", cols: "90" });
  body.value = JSON.stringify(example, null, 2);
  const answer = el("div", { id: "study-answer" });
  const button = el("button", { id: "study-create" }, "Create study");
  button.addEventListener("click", async () => {
    const response = await fetch(ENGINE + "/v2/studies", { method: "POST", headers: { "content-type": "application/json" }, body: body.value });
    const document_ = await response.json();
    if (response.ok) location.hash = `studies?study_id=${document_.study_id}`;
    else answer.replaceChildren(el("p", { class: "refused" }, document_.error.detail));
  });
  return el("div", {}, el("h2", {}, "New study (the POST /v2/studies body)"), body, el("br"), button, answer);
}

async function renderStudy(page, studyId) {
  const base = `/v2/studies/${studyId}`;
  const study = await engine(base);
  const trials = (await engine(`${base}/trials?limit=1000`)).items;
  const definition = study.definition;
  page.append(
    el("p", {}, el("a", { href: "#studies" }, "All studies")),
    table(
      ["study", "strategy", "revision", "state", "objective", "sampler", "last error"],
      [[study.study_id, study.strategy_id, study.revision_id.slice(0, 12), study.state,
        `${definition.metric} ${definition.direction}`, `${definition.sampler} seed ${definition.seed}`, study.last_error ?? ""]],
    ),
    el("div", { id: "study-progress" }, table(
      ["target", "complete", "running", "waiting", "failed", "best trial", "best value"],
      [[study.progress.target, study.progress.complete, study.progress.running, study.progress.waiting,
        study.progress.failed, study.best_trial ?? "", study.best_value ?? ""]],
    )),
  );
  if (operator()) page.append(actions(base));
  page.append(el("div", { id: "study-answer" }), el("div", { id: "history", style: "height: 320px" }));
  await needPlotly();
  history(trials, study);
  page.append(el("h2", {}, "Trials"), trialTable(trials));
  if (study.state === "QUEUED" || study.state === "RUNNING" || study.progress.running > 0) {
    studies.timer = setTimeout(() => show("studies"), STUDY_POLL_MS);
  }
}

function actions(base) {
  const answer = () => document.getElementById("study-answer");
  const buttons = ["pause", "resume", "cancel", "retry", "holdout", "promote"].map((action) => {
    const button = el("button", { id: `study-${action}` }, action);
    button.addEventListener("click", async () => {
      const response = await fetch(`${ENGINE}${base}/${action}`);
      const body = await response.json();
      if (!response.ok && !body.schema_id) return answer().replaceChildren(el("p", { class: "refused" }, body.error.detail));
      if (action === "holdout") return answer().replaceChildren(holdoutView(body));
      if (action === "promote") {
        return answer().replaceChildren(
          response.ok ? el("p", { id: "promoted" }, `Saved revision ${body.revision_id} (${body.message})`)
            : el("p", { class: "refused" }, `The head moved: it is ${body.head_revision_id}; nothing written`),
        );
      }
      show("studies");
    });
    return button;
  });
  return el("div", { class: "controls" }, ...buttons);
}

function holdoutView(check) {
  const side = (name, run) => [name, `${run.window.start} .. ${run.window.end}`, run.state,
    run.statistics ? run.statistics.total_pnl : "", run.statistics ? run.statistics.sharpe ?? "" : "", run.result_hash ?? ""];
  return el("div", { id: "holdout" },
    el("p", {}, `Trial ${check.trial}: ` + check.params.map((p) => `${p.name}=${p.value}`).join(", ")),
    table(["window", "span", "state", "total_pnl", "sharpe", "result hash"], [side("training", check.training), side("holdout", check.holdout)]),
  );
}

function history(trials, study) {
  const complete = trials.filter((t) => t.state === "COMPLETE");
  const points = {
    type: "scatter", mode: "markers", name: study.definition.metric,
    x: complete.map((t) => t.trial), y: complete.map((t) => t.value), text: complete.map((t) => t.value), hoverinfo: "x+text",
  };
  const shapes = study.best_value === null ? [] : [{
    type: "line", xref: "paper", x0: 0, x1: 1, yref: "y", y0: study.best_value, y1: study.best_value, line: { dash: "dot", color: "#1a7f37" },
  }];
  const layout = { title: { text: "Optimisation history (the dotted line: the best value served)" }, margin: { t: 40, r: 20, b: 40, l: 60 },
    xaxis: { title: { text: "trial" } }, yaxis: { title: { text: study.definition.metric } }, shapes };
  Plotly.react("history", [points], layout, { responsive: true, displaylogo: false });
}

function trialTable(trials) {
  return table(
    ["trial", "state", "parameters", "value", "job", "reason"],
    trials.map((t) => [t.trial, t.state, t.params.map((p) => `${p.name}=${p.value}`).join(", "), t.value ?? "",
      t.job_id ? t.job_id.slice(0, 12) : "", t.reason ?? ""]),
  );
}
