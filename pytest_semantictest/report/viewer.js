// The results viewer (pytest_semantictest/report/viewer.py embeds this script, its data and styles).
// Values reach the page as text nodes only: nothing from a record is ever parsed as markup.
"use strict";
(function () {
  const PAGE = 100;
  const data = JSON.parse(document.getElementById("st-data").textContent);
  // Every test's record, one JSON line each, gzip + base64: unpacked once the list is drawn.
  let detailLines = null;
  async function unpack() {
    const packed = atob(document.getElementById("st-details").textContent.trim());
    const bytes = new Uint8Array(packed.length);
    for (let i = 0; i < packed.length; i++) bytes[i] = packed.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return (await new Response(stream).text()).split("\n");
  }
  const rows = data.rows.map((row, index) => Object.assign(row, { index }));
  const RED = new Set(["failed", "error", "xpassed"]);
  const state = { query: "", outcomes: new Set(), format: "", changed: false, page: 0, open: new Set() };

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = String(value);
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children.flat(Infinity)) {
      if (child === undefined || child === null || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function pretty(value) {
    if (value === null || value === undefined) return "";
    if (typeof value === "string") {
      const text = value.trim();
      if (text.startsWith("{") || text.startsWith("[")) {
        try { return JSON.stringify(JSON.parse(text), null, 2); } catch (e) { /* not JSON: as written */ }
      }
      return value;
    }
    return JSON.stringify(value, null, 2);
  }

  function pct(x) { return (Math.max(0, Math.min(1, Number(x))) * 100).toFixed(1) + "%"; }

  // A bar from 0 to 1: the interval [low, high], the point, and the threshold's mark.
  function rateBar(rate) {
    const bar = el("span", { class: "st-bar", title: `${rate.passed}/${rate.runs} passed, interval ${Number(rate.low).toFixed(2)} to ${Number(rate.high).toFixed(2)}` + (rate.threshold !== undefined ? `, threshold ${rate.threshold}` : "") });
    bar.append(el("span", { class: "st-bar-range", style: `left:${pct(rate.low)};width:calc(${pct(rate.high)} - ${pct(rate.low)})` }));
    bar.append(el("span", { class: "st-bar-point", style: `left:${pct(rate.rate)}` }));
    if (rate.threshold !== undefined && rate.threshold !== null) {
      const ok = Number(rate.low) >= Number(rate.threshold);
      bar.append(el("span", { class: "st-bar-threshold" + (ok ? " ok" : ""), style: `left:${pct(rate.threshold)}` }));
    }
    return el("span", { class: "st-rate" }, bar, el("span", { class: "st-rate-text", text: `${rate.passed}/${rate.runs}` }));
  }

  function scoreBar(label, value, threshold) {
    const line = el("div", { class: "st-score-line" }, el("span", { class: "st-score-label", text: label }));
    const bar = el("span", { class: "st-bar" }, el("span", { class: "st-bar-fill", style: `width:${pct(value)}` }));
    if (threshold !== null && threshold !== undefined) bar.append(el("span", { class: "st-bar-threshold", style: `left:${pct(threshold)}` }));
    line.append(bar, el("span", { class: "st-score-value", text: value === null || value === undefined ? "-" : String(value) }));
    return line;
  }

  function matches(row) {
    if (state.outcomes.size && !state.outcomes.has(row.outcome)) return false;
    if (state.format && row.format !== state.format) return false;
    if (state.changed && !(row.baseline && row.baseline.change && row.baseline.change !== "unchanged")) return false;
    if (!state.query) return true;
    const q = state.query.toLowerCase();
    return [row.id, row.name, row.why].some((v) => typeof v === "string" && v.toLowerCase().includes(q));
  }

  function header() {
    const s = data.summary;
    const counts = Object.entries(s.outcomes).map(([o, n]) => el("span", { class: `st-badge st-${o}`, text: `${n} ${o}` }));
    const formats = Object.entries(s.formats).map(([fmt, c]) => {
      const total = Object.values(c).reduce((a, b) => a + b, 0);
      const passed = (c.passed || 0) + (c.xfailed || 0);
      const counted = total - (c.skipped || 0);
      const rate = counted ? passed / counted : 0;
      return el("div", { class: "st-format-rate" },
        el("span", { class: "st-format-name", text: fmt }),
        el("span", { class: "st-bar" }, el("span", { class: "st-bar-fill" + (passed < counted ? " red" : ""), style: `width:${pct(rate)}` })),
        el("span", { text: counted ? `${passed}/${counted} passed` + (c.skipped ? `, ${c.skipped} skipped` : "") : `${total} skipped` }));
    });
    const llm = s.llm;
    const costs = llm.models.map((m) => `${m.model}: ${m.in + m.out} tokens` + (m.cost === null ? "" : `, cost ${m.cost.toFixed(4)}`));
    return el("header", {},
      el("h1", { text: data.title }),
      el("div", { class: "st-counts" }, el("strong", { text: `${s.tests} tests` }), counts),
      el("div", { class: "st-formats" }, formats),
      el("div", { class: "st-llm", id: "st-llm", text: `LLM: ${llm.calls} calls, ${llm.cache_hits} cache hits, ${llm.tokens} tokens` + (costs.length ? ` (${costs.join("; ")})` : "") }));
  }

  function controls(onChange) {
    const search = el("input", { type: "search", id: "st-search", placeholder: "Search tests and messages", value: state.query,
      oninput: (e) => { state.query = e.target.value; state.page = 0; onChange(); } });
    const outcomes = Object.keys(data.summary.outcomes).map((o) => {
      const box = el("input", { type: "checkbox", id: `st-status-${o}`, checked: state.outcomes.has(o),
        onchange: (e) => { e.target.checked ? state.outcomes.add(o) : state.outcomes.delete(o); state.page = 0; onChange(); } });
      return el("label", { class: `st-filter st-${o}` }, box, ` ${o}`);
    });
    const formats = el("select", { id: "st-format", onchange: (e) => { state.format = e.target.value; state.page = 0; onChange(); } },
      el("option", { value: "", text: "every format" }),
      Object.keys(data.summary.formats).map((f) => el("option", { value: f, text: f, selected: state.format === f })));
    const hasBaseline = rows.some((r) => r.baseline);
    const changed = hasBaseline ? el("label", { class: "st-filter" },
      el("input", { type: "checkbox", id: "st-changed", checked: state.changed, onchange: (e) => { state.changed = e.target.checked; state.page = 0; onChange(); } }),
      " changed against the baseline") : null;
    return el("div", { class: "st-controls" }, search, el("span", { class: "st-filters" }, outcomes), formats, changed);
  }

  function baselineCell(row) {
    const b = row.baseline;
    if (!b) return "";
    const now = row.pass_rate ? `${row.pass_rate.passed}/${row.pass_rate.runs}` : row.outcome;
    const was = b.old || b.was || "none";
    return el("span", { class: `st-change st-change-${b.change}`, title: (b.reasons || []).join("; ") },
      el("span", { class: "st-change-kind", text: b.change }), ` ${was} \u2192 ${now}`);
  }

  function listRow(row) {
    const cells = [
      el("td", {}, el("span", { class: `st-badge st-${row.outcome}`, text: row.outcome })),
      el("td", { class: "st-name" }, el("div", { class: "st-id", text: row.id }), row.why ? el("div", { class: "st-why", text: row.why }) : null),
      el("td", { text: row.format }),
      el("td", { class: "st-num", text: row.s === undefined || row.s === null ? "" : `${Number(row.s).toFixed(3)} s` }),
      el("td", {}, row.pass_rate ? rateBar(row.pass_rate) : null),
      el("td", {}, baselineCell(row)),
      el("td", { text: !row.mutation ? "" : !row.mutation.total ? "not mutated" : `${row.mutation.killed}/${row.mutation.total} killed` + (row.mutation.survived ? `, ${row.mutation.survived} survived` : "") }),
    ];
    const tr = el("tr", { class: `st-row st-row-${row.outcome}`, "data-index": row.index, tabindex: 0 }, cells);
    const toggle = () => { state.open.has(row.index) ? state.open.delete(row.index) : state.open.add(row.index); render(); };
    tr.addEventListener("click", toggle);
    tr.addEventListener("keydown", (e) => { if (e.key === "Enter") toggle(); });
    return tr;
  }

  function section(title, ...children) { return el("section", { class: "st-section" }, el("h3", { text: title }), children); }

  function folded(summary, text) {
    return el("details", { class: "st-fold" }, el("summary", { text: summary }), el("pre", { text: pretty(text) }));
  }

  function toolCard(call) {
    return el("div", { class: "st-tool" + (call.error ? " st-tool-error" : "") },
      el("div", { class: "st-tool-name" }, el("code", { text: call.name }), call.where ? ` ${call.where}` : ""),
      call.arguments !== null && call.arguments !== undefined ? el("pre", { class: "st-tool-args", text: pretty(call.arguments) }) : null,
      call.result !== null && call.result !== undefined ? el("div", { class: "st-tool-result" }, el("span", { class: "st-label", text: "result" }), el("pre", { text: pretty(call.result) })) : null,
      call.error ? el("div", { class: "st-tool-result" }, el("span", { class: "st-label", text: "error" }), el("pre", { text: pretty(call.error) })) : null);
  }

  function judgeCard(j) {
    if (j.error) return el("div", { class: "st-judge" }, el("strong", { text: "no verdict: " }), j.error);
    const head = j.kind === "validator" ? `validator: ${j.assertion || ""}` : "judge" + (j.model ? ` (${j.model})` : "");
    return el("div", { class: "st-judge " + (j.passed ? "st-ok" : "st-bad") },
      el("div", { class: "st-judge-head", text: `${head}: ${j.passed ? "passed" : "failed"}` }),
      scoreBar("score", j.score, j.threshold),
      Object.entries(j.criteria || {}).map(([k, v]) => scoreBar(k, v, null)),
      j.reasoning ? el("p", { class: "st-reasoning", text: j.reasoning }) : null,
      (j.constraints || []).map((c) => el("div", { class: c.met ? "st-ok" : "st-bad", text: `${c.met ? "\u2713" : "\u2717"} ${c.constraint}` + (c.reason ? `: ${c.reason}` : "") })));
  }

  function turnBubbles(turns) {
    return turns.map((t) => el("div", { class: "st-turn" },
      t.input !== undefined && t.input !== null ? el("div", { class: "st-bubble st-user" }, el("span", { class: "st-label", text: t.source === "simulator" ? "simulated user" : "user" }), pretty(t.input)) : null,
      (t.tool_calls || []).map(toolCard),
      t.output !== undefined && t.output !== null ? el("div", { class: "st-bubble st-agent" }, el("span", { class: "st-label", text: "agent" }), pretty(t.output)) : null,
      t.error ? el("div", { class: "st-bad", text: `error: ${t.error}` }) : null));
  }

  // A test's spans as bars on one time axis (start after the first span, duration).
  function timeline(spans) {
    const end = Math.max(1e-3, ...spans.map((s) => Number(s.startMs || 0) + Number(s.durationMs || 0)));
    return el("div", { class: "st-timeline" }, spans.map((s) => el("div", { class: "st-span-row", title: `${s.name}: ${s.durationMs} ms, starting at ${s.startMs} ms` + (s.status === "error" ? " (error)" : "") },
      el("span", { class: "st-span-name", text: s.name }),
      el("span", { class: "st-span-track" }, el("span", { class: "st-span-bar" + (s.status === "error" ? " error" : ""),
        style: `left:${pct(Number(s.startMs || 0) / end)};width:max(2px, ${pct(Number(s.durationMs || 0) / end)})` })),
      el("span", { class: "st-span-ms", text: `${s.durationMs} ms` }))));
  }

  function detail(row) {
    if (detailLines === null) return el("tr", { class: "st-detail" }, el("td", { colspan: 7, text: "Loading..." }));
    const line = detailLines[row.index];
    if (line === undefined) return el("tr", { class: "st-detail" }, el("td", { colspan: 7, text: "No details." }));
    const r = JSON.parse(line);
    const parts = [];
    if (r.message) parts.push(section("Why it did not pass", el("pre", { class: "st-message", text: r.message })));
    if (r.pass_rate) {
      const p = r.pass_rate;
      parts.push(section("Pass rate", rateBar(p),
        el("p", { text: `${p.passed} of ${p.runs} runs passed; interval ${p.low} to ${p.high}` + (p.threshold !== undefined ? `; threshold ${p.threshold}` : "") + (p.decision ? `; ${p.decision}` : "") }),
        r.runs ? el("div", { class: "st-runs" }, r.runs.map((o, i) => el("span", { class: `st-run st-${o}`, title: `run ${i + 1}: ${o}` }))) : null));
    }
    if (r.baseline) parts.push(section("Against the baseline", baselineCell(row), el("ul", {}, (r.baseline.reasons || []).map((x) => el("li", { text: x })))));
    if (r.turns) parts.push(section("Conversation", turnBubbles(r.turns)));
    for (const step of r.steps || []) {
      const children = [];
      if (step.error) children.push(el("div", { class: "st-bad", text: `error: ${step.error}` }));
      for (const x of step.http || []) {
        children.push(el("div", { class: "st-http" },
          el("div", { class: "st-http-line", text: `${x.method} ${x.url} \u2192 ${x.status || "no response"}` }),
          x.request ? folded("request body", x.request) : null,
          x.response ? folded("response body", x.response) : null,
          x.error ? el("div", { class: "st-bad", text: x.error }) : null));
      }
      if (step.tools) children.push(el("div", { class: "st-tools" }, step.tools.map(toolCard)));
      for (const text of step.streams || []) children.push(folded("parsed stream", text));
      if (step.spans) children.push(timeline(step.spans));
      for (const j of step.judges || []) children.push(judgeCard(j));
      parts.push(section(`${step.step}` + (step.ms !== undefined ? ` (${step.ms} ms)` : ""), children));
    }
    for (const j of r.judgements || []) {
      parts.push(section(`Judged: ${j.check || ""}`, (j.items || []).map((i) => el("div", { class: i.passed ? "st-ok" : "st-bad", text: `${i.passed ? "\u2713" : "\u2717"} ${i.text}` + (i.reason ? `: ${i.reason}` : "") }))));
    }
    if (r.mutation) {
      const m = r.mutation;
      parts.push(section(m.total ? `Mutation: ${m.killed}/${m.total} killed` : "Mutation: not mutated",
        m.not_mutated ? el("p", { text: `not mutated: ${m.not_mutated}` }) : null,
        el("ul", { class: "st-survivors" }, (m.survived || []).map((s) => el("li", { text: `survived: ${s.kind} (${s.where}): ${s.change}` })))));
    }
    for (const n of r.notes || []) parts.push(section(n.title || "note", el("pre", { text: pretty(n.fields && Object.keys(n.fields).length ? n.fields : n.text) })));
    if (!parts.length) parts.push(el("p", { text: "Nothing more was recorded for this test." }));
    return el("tr", { class: "st-detail", "data-loaded": "1" }, el("td", { colspan: 7 }, parts));
  }

  function list() {
    const shown = rows.filter(matches);
    const pages = Math.max(1, Math.ceil(shown.length / PAGE));
    state.page = Math.min(state.page, pages - 1);
    const body = el("tbody");
    for (const row of shown.slice(state.page * PAGE, (state.page + 1) * PAGE)) {
      body.append(listRow(row));
      if (state.open.has(row.index)) body.append(detail(row));
    }
    const pager = el("div", { class: "st-pager" },
      el("button", { id: "st-prev", disabled: state.page === 0, onclick: () => { state.page -= 1; render(); } }, "previous"),
      el("span", { id: "st-shown", text: ` ${shown.length} of ${rows.length} tests, page ${state.page + 1} of ${pages} ` }),
      el("button", { id: "st-next", disabled: state.page >= pages - 1, onclick: () => { state.page += 1; render(); } }, "next"));
    const head = el("thead", {}, el("tr", {}, ["outcome", "test", "format", "time", "pass rate", "baseline", "mutants"].map((h) => el("th", { text: h }))));
    return el("div", {}, pager, el("table", { class: "st-list" }, head, body));
  }

  const app = document.getElementById("app");
  let listHolder = null;
  function render() {
    const next = list();
    listHolder.replaceWith(next);
    listHolder = next;
  }
  app.textContent = "";
  listHolder = el("div");
  app.append(header(), controls(render), listHolder);
  render();
  document.body.setAttribute("data-ready", "1");
  unpack().then((lines) => {
    detailLines = lines;
    document.body.setAttribute("data-details", "1");
    if (state.open.size) render();
  }).catch((error) => {
    detailLines = [];
    app.prepend(el("p", { class: "st-bad", text: `The page's test details could not be read: ${error}` }));
  });
})();
