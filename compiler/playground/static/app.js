// archcost playground: a client of `archcost serve`'s JSON API. Every number shown comes from the server,
// which evaluates the compiled plain forms (the CLI's engine); this file only asks and draws.
"use strict";

const state = {
  catalogue: null, source: null, compiled: null, nodes: {}, picked: null, marks: [], pan: null,
  view: "blocks", tab: "report", seq: 0, conventions: {}, options: {},
};

// ---- the API ------------------------------------------------------------------------------------------
async function api(method, payload) {
  const response = await fetch(`/api/${method}`, {
    method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(payload),
  });
  return response.json();
}

function spec() {
  return {text: editor.getValue(), source: state.source};
}

function scenario() {
  const phase = byId("phase").value;
  const shape = {phase, B: number("B"), S: number("S"), G: number("G")};
  if (phase !== "decode") shape.P = number("P");
  return shape;
}

function conventions() {
  return {...state.conventions, options: {...state.options}};
}

function byId(id) { return document.getElementById(id); }
function number(letter) { return parseInt(byId(`field-${letter}`).value, 10); }
function element(tag, attributes = {}, text = "") {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  if (text) node.textContent = text;
  return node;
}
function debounce(fn, ms) {
  let timer = null;
  return (...args) => { clearTimeout(timer); timer = setTimeout(() => fn(...args), ms); };
}
function grouped(n) { return n === null || n === undefined ? "—" : Number(n).toLocaleString("en-US"); }
function bytes(n) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let i = 0; let v = n;
  while (Math.abs(v) >= 1024 && i < units.length - 1) { v /= 1024; i += 1; }
  return `${+v.toPrecision(4)} ${units[i]}`;
}
function setStatus(text) { byId("status").textContent = text; }

// ---- the editor ---------------------------------------------------------------------------------------
function defineMode(rules) {
  const start = rules.map((rule) => ({regex: new RegExp(rule.regex), token: rule.token}));
  start.push({regex: /[{}(),.:]/, token: "bracket"});
  CodeMirror.defineSimpleMode("arch", {start, meta: {lineComment: "#"}});
}

let editor = null;

function makeEditor() {
  editor = CodeMirror(byId("editor"), {
    // long lines wrap in the narrow editor rather than run off its edge; marks follow the text either way
    mode: "arch", lineNumbers: true, indentUnit: 2, tabSize: 2, viewportMargin: Infinity, lineWrapping: true,
    extraKeys: {Tab: (cm) => cm.replaceSelection("  ")},
  });
  editor.on("change", debounce(recompile, 250));
  window.editor = editor;  // for the browser tests and the curious
}

function clearMarks() {
  state.marks.forEach((mark) => mark.clear());
  state.marks = [];
  editor.clearGutter("CodeMirror-linenumbers");
  for (let line = 0; line < editor.lineCount(); line += 1) editor.removeLineClass(line, "background", "cm-error-line");
}

function showProblem(problem) {
  clearMarks();
  const box = byId("errors");
  box.hidden = false;
  box.replaceChildren();
  for (const d of problem.diagnostics) {
    const item = element("pre", {class: "diagnostic", "data-code": d.code}, d.rendered || problem.error);
    box.append(item);
    if (d.in_editor && d.span) {
      const from = {line: d.span.line - 1, ch: d.span.column - 1};
      const to = {line: d.span.end_line - 1, ch: Math.max(d.span.end_column - 1, d.span.column)};
      state.marks.push(editor.markText(from, to, {className: "cm-error-mark", title: d.message}));
      editor.addLineClass(from.line, "background", "cm-error-line");
      item.addEventListener("click", () => { editor.setCursor(from); editor.focus(); });
    }
  }
  if (!problem.diagnostics.length) box.append(element("pre", {class: "diagnostic"}, problem.error));
  setStatus(problem.diagnostics.map((d) => d.code).join(" ") || "error");
}

function hideFigures() {
  byId("model-name").textContent = "";
  byId("params").textContent = "";
  byId("report-title").textContent = "the spec does not compile: its costs show once it does";
  byId("report").replaceChildren();
  for (const id of ["formulas", "diagram", "compare-out", "layout-cards", "layout-text", "layout-diagram"]) byId(id).replaceChildren();
  byId("node-panel").hidden = true;
  state.picked = null;
}

function hideProblem() {
  clearMarks();
  byId("errors").hidden = true;
}

// ---- compile and evaluate -----------------------------------------------------------------------------
async function recompile() {
  const seq = ++state.seq;
  setStatus("compiling…");
  const answer = await api("compile", {spec: spec(), conventions: conventions()});
  if (seq !== state.seq) return;  // a newer edit is on its way
  if (!answer.ok) {
    state.compiled = null;
    hideFigures();  // the last spec's figures would be wrong for this text: none are shown until it compiles
    showProblem(answer.problem || {error: answer.internal, diagnostics: []});
    return;
  }
  hideProblem();
  state.compiled = answer.ok;
  byId("model-name").textContent = answer.ok.name;
  byId("params").textContent = `${grouped(answer.ok.params)} parameters`
    + (answer.ok.params_active !== answer.ok.params ? ` (${grouped(answer.ok.params_active)} active)` : "");
  showOptions(answer.ok.options, answer.ok.chosen);
  setStatus("");
  await refresh(true);
}

async function refresh(compiled = false) {
  if (!state.compiled) return;
  const jobs = [evaluate()];
  if (state.tab === "formulas") jobs.push(formulas());
  if (state.tab === "diagram" && compiled) jobs.push(diagram());
  if (state.tab === "plots") jobs.push(plots());
  if (state.picked) jobs.push(showNode(state.picked, false));
  await Promise.all(jobs);
}

async function evaluate() {
  const answer = await api("evaluate", {spec: spec(), conventions: conventions(), scenario: scenario()});
  if (!answer.ok) { showProblem(answer.problem); return; }
  byId("report-title").textContent = answer.ok.title;
  const table = byId("report");
  table.replaceChildren(row("th", answer.ok.header));
  for (const cells of answer.ok.rows) {
    const tr = row("td", cells);
    tr.dataset.quantity = cells[0];
    table.append(tr);
  }
}

function row(tag, cells, textColumns = 1) {
  const tr = element("tr");
  cells.forEach((cell, i) => tr.append(element(tag, i < textColumns ? {} : {class: "num"}, cell)));
  return tr;
}

async function formulas() {
  const answer = await api("formulas", {spec: spec(), conventions: conventions(), scenario: scenario()});
  if (!answer.ok) return;
  const box = byId("formulas");
  try {
    katex.render(answer.ok.latex, box, {displayMode: true, throwOnError: true, maxExpand: 100000});
  } catch (error) {
    box.replaceChildren(element("pre", {class: "plain"}, answer.ok.text));
  }
}

// ---- the diagram --------------------------------------------------------------------------------------
async function diagram() {
  const answer = await api("diagram", {spec: spec(), conventions: conventions(), blocks: state.view === "blocks"});
  if (!answer.ok) return;
  state.nodes = answer.ok.nodes;
  placeSvg(byId("diagram"), answer.ok.svg, true);
}

function placeSvg(box, svgText, clickable) {
  box.innerHTML = svgText.replace(/^[\s\S]*?(<svg)/, "$1");
  const svg = box.querySelector("svg");
  svg.removeAttribute("width"); svg.removeAttribute("height");
  svg.style.width = "100%"; svg.style.height = "100%";
  if (box.id === "diagram" && state.pan) { state.pan.destroy(); state.pan = null; }
  const pan = svgPanZoom(svg, {zoomScaleSensitivity: 0.3, minZoom: 0.2, maxZoom: 40, controlIconsEnabled: true,
                               dblClickZoomEnabled: false});
  if (box.id === "diagram") state.pan = pan;
  if (!clickable) return;
  svg.querySelectorAll("g.node").forEach((g) => {
    const name = g.querySelector("title").textContent;
    g.dataset.node = name;
    g.addEventListener("click", () => showNode(name, true));
    g.addEventListener("dblclick", () => expand(name));
  });
}

function expand(name) {
  if (!name.startsWith("block ") || state.view === "ops") return;
  state.view = "ops";
  document.querySelector('input[name="view"][value="ops"]').checked = true;
  diagram();
}

async function showNode(name, fromClick) {
  const info = state.nodes[name];
  if (!info) return;
  state.picked = name;
  document.querySelectorAll("g.node.picked").forEach((g) => g.classList.remove("picked"));
  const g = document.querySelector(`g.node[data-node="${CSS.escape(name)}"]`);
  if (g) g.classList.add("picked");
  const panel = byId("node-panel");
  panel.hidden = false;
  panel.replaceChildren(element("h3", {}, info.label), element("p", {}, `${info.kind} · ${info.shape}`),
                        element("p", {class: "muted"}, `component ${info.component || "—"}`));
  if (info.defined) panel.append(element("p", {class: "muted"}, `written at ${info.defined.file}:${info.defined.line}`));
  if (fromClick) { pickLine(info.span); if (state.pan) state.pan.resize(); }
  const answer = await api("node", {spec: spec(), conventions: conventions(), scenario: scenario(),
                                    node: info.op || name});
  if (!answer.ok) return;
  if (answer.ok.ops) panel.append(opsTable(answer.ok.ops)); else panel.append(costTable(answer.ok));
}

function opsTable(ops) {  // a block's ops: one row each, at the page's scenario
  const table = element("table", {class: "numbers", id: "node-costs"});
  table.append(row("th", ["op", "shape", "params", "matrix FLOPs"]));
  ops.forEach((op) => table.append(row("td", [op.op.split(".").pop(), op.shape, grouped(op.params),
                                              grouped(op.flops_matrix)], 2)));
  return table;
}

function costTable(op) {
  const table = element("table", {class: "numbers", id: "node-costs"});
  for (const key of ["layers", "params", "flops_matrix", "flops_nonmatrix", "flops_matrix_all_layers",
                     "bytes_moved_all_layers"]) {
    table.append(row("td", [key, grouped(op[key])]));
  }
  return table;
}

function pickLine(span) {
  editor.getAllMarks().filter((m) => m.className === "cm-picked-text").forEach((m) => m.clear());
  for (let line = 0; line < editor.lineCount(); line += 1) editor.removeLineClass(line, "background", "cm-picked");
  if (!span) return;
  editor.addLineClass(span.line - 1, "background", "cm-picked");
  editor.markText({line: span.line - 1, ch: span.column - 1}, {line: span.end_line - 1, ch: span.end_column - 1},
                  {className: "cm-picked-text"});
  editor.scrollIntoView({line: span.line - 1, ch: 0}, 80);
}

// ---- plots --------------------------------------------------------------------------------------------
const charts = {};

function length(n) {
  for (const [unit, scale] of [["M", 2 ** 20], ["K", 2 ** 10]]) if (n >= scale) return `${Math.round(n / scale)}${unit}`;
  return String(n);
}
function flopsText(v) {
  for (const [unit, scale] of [["P", 1e15], ["T", 1e12], ["G", 1e9], ["M", 1e6]]) if (v >= scale) return `${+(v / scale).toPrecision(4)} ${unit}FLOPs`;
  return `${v}`;
}
function safe(format) { return (v) => (v === null || v === undefined || Number.isNaN(v) ? "—" : format(v)); }
function decades(format, base) {  // a log axis labels its powers only: 1, 10, 100 (or 1K, 2K, 4K…)
  return (u, ticks) => ticks.map((v) => {
    const power = Math.log(v) / Math.log(base);
    return Math.abs(power - Math.round(power)) < 1e-9 ? safe(format)(v) : "";
  });
}

async function plots() {
  const answer = await api("plots", {spec: spec(), conventions: conventions(), scenario: scenario(),
                                     device: byId("plot-device").value});
  if (!answer.ok) return;
  const data = answer.ok;
  const ctx = data.context;
  chart("plot-state", "state of one request against context (dashed: the part that does not grow)",
        [ctx.x, ctx.state_bytes, ctx.x.map(() => ctx.state_fixed_bytes || null)], ["state", "fixed part"], bytes, {yBase: 2});
  chart("plot-flops", "matrix FLOPs of one decode step against context", [ctx.x, ctx.decode_flops_matrix],
        ["decode step"], flopsText);
  const cap = data.capacity;
  chart("plot-capacity", `requests that fit on ${data.device} (${bytes(cap.memory_bytes)}) against context`,
        [cap.x, cap.max_batch || cap.x.map(() => null)], ["max batch"], grouped, {linearY: true});
  const roof = data.roofline;
  const order = roof.x.concat(roof.points.map((p) => p.intensity)).map((x, i) => [x, i]).sort((a, b) => a[0] - b[0]);
  const roofAt = (i) => (i < roof.x.length ? roof.roof[i] : null);
  const pointAt = (i) => (i >= roof.x.length ? roof.points[i - roof.x.length].flops_per_second : null);
  chart("plot-roofline", `roofline of ${data.device} (${roof.peak_format}): decode at B, at B = 64, prefill`,
        [order.map((p) => p[0]), order.map((p) => roofAt(p[1])), order.map((p) => pointAt(p[1]))],
        ["roof", "calls"], (v) => `${+(v / 1e12).toPrecision(3)} TFLOPS`, {points: true, xBase: 10,
        xFormat: (v) => `${+v.toPrecision(2)}`});
}

function chart(id, title, data, labels, format, how = {}) {
  const box = byId(id);
  if (charts[id]) charts[id].destroy();
  const colours = ["#1f6feb", "#d1242f", "#2da44e"];
  const xBase = how.xBase || 2;
  const series = [{label: xBase === 2 ? "context" : "FLOP/byte", value: (u, v) => safe(how.xFormat || length)(v)},
    ...labels.map((label, i) => ({
      label, stroke: colours[i], width: 2, value: (u, v) => safe(format)(v), dash: label === "fixed part" ? [6, 4] : undefined,
      points: {show: Boolean(how.points && i === 1), size: 10, fill: colours[i]},
      paths: how.points && i === 1 ? () => null : undefined, spanGaps: !how.points,
    }))];
  charts[id] = new uPlot({title, width: Math.max(380, (box.clientWidth || 480) - 12), height: 260, series,
    scales: {x: {time: false, distr: 3, log: xBase}, y: {distr: how.linearY ? 1 : 3, log: how.yBase || 10}},
    axes: [{values: decades(how.xFormat || length, xBase), space: 30},
           {values: how.linearY ? (u, ticks) => ticks.map(safe(format)) : decades(format, how.yBase || 10), size: 90}]},
    data, box);
}

// ---- compare and layouts ------------------------------------------------------------------------------
const CHAPTER_FIVE = ["specs/deepseek-v4.1-flash.arch", "specs/qwen3-8b.arch", "specs/qwen3.6-35b-a3b.arch",
                      "specs/deepseek-v4-flash.arch", "specs/kimi-k3.arch"];  // the README's main job, in its order

async function compare() {
  const chosen = [...document.querySelectorAll("#compare-specs input:checked")].map((box) => box.value);
  const specs = chosen.map((name) => (name === "" ? spec() : {text: catalogueText(name), source: name}));
  const out = byId("compare-out");
  if (!specs.length) { out.textContent = "pick at least one spec"; return; }
  const answer = await api("compare", {specs, conventions: conventions(), scenario: scenario(),
                                       table: byId("compare-table").value});
  if (!answer.ok) { out.replaceChildren(element("pre", {class: "diagnostic"}, answer.problem.error)); return; }
  const t = answer.ok;
  const table = element("table", {class: "numbers", id: "compare-table-out"});
  table.append(row("th", t.header, t.text_columns));
  t.rows.forEach((cells) => table.append(row("td", cells, t.text_columns)));
  out.replaceChildren(element("h2", {}, t.title), table, ...t.notes.map((n) => element("p", {class: "muted"}, n)));
}

function catalogueText(name) {
  return state.catalogue.specs.find((s) => s.name === name).text;
}

async function layout() {
  const answer = await api("layout", {spec: spec(), conventions: conventions(), scenario: scenario(),
    degrees: byId("layout-degrees").value, device: byId("layout-device").value, link: byId("layout-link").value});
  if (!answer.ok) { byId("layout-text").textContent = answer.problem.error; byId("layout-cards").replaceChildren(); return; }
  const table = byId("layout-cards");  // the CLI's own per-card table, cell for cell
  table.replaceChildren(row("th", answer.ok.header));
  answer.ok.rows.forEach((cells) => table.append(row("td", cells)));
  byId("layout-text").textContent = answer.ok.text;
  placeSvg(byId("layout-diagram"), answer.ok.diagram, false);
}

// ---- import -------------------------------------------------------------------------------------------
async function importConfig(file) {
  const text = await file.text();
  const answer = await api("import", {config: text, file: file.name});
  if (!answer.ok) { showProblem(answer.problem); return; }
  state.source = null;
  byId("spec-picker").value = "";
  editor.setValue(answer.ok.text);
  setStatus(answer.ok.passed_over.length ? `imported; passed over: ${answer.ok.passed_over.join(", ")}` : "imported");
}

function wireDrop() {
  const veil = byId("drop-veil");
  window.addEventListener("dragover", (event) => { event.preventDefault(); veil.hidden = false; });
  window.addEventListener("dragleave", (event) => { if (!event.relatedTarget) veil.hidden = true; });
  window.addEventListener("drop", (event) => {
    event.preventDefault();
    veil.hidden = true;
    const file = event.dataTransfer.files[0];
    if (file) importConfig(file);
  });
  byId("import-input").addEventListener("change", (event) => {
    if (event.target.files[0]) importConfig(event.target.files[0]);
  });
}

// ---- controls -----------------------------------------------------------------------------------------
const SLIDERS = {  // slider position → value: powers of two (S also 0)
  B: (v) => 2 ** v, S: (v) => (v === 0 ? 0 : 2 ** (v - 1)), P: (v) => 2 ** v, G: (v) => 2 ** v,
};

function wireSliders() {
  const moved = debounce(() => refresh(false), 60);
  for (const letter of Object.keys(SLIDERS)) {
    const slider = byId(`slider-${letter}`); const field = byId(`field-${letter}`);
    slider.addEventListener("input", () => { field.value = SLIDERS[letter](parseInt(slider.value, 10)); moved(); });
    field.addEventListener("change", moved);
  }
  setShape({B: 1, S: 0, P: 8192, G: 1});
}

function setShape(shape) {
  for (const [letter, value] of Object.entries(shape)) {
    byId(`field-${letter}`).value = value;
    const slider = byId(`slider-${letter}`);
    for (let v = parseInt(slider.min, 10); v <= parseInt(slider.max, 10); v += 1) {
      if (SLIDERS[letter](v) === value) slider.value = v;
    }
  }
}

function select(id, words, chosen, onChange) {
  const box = byId(id);
  words.forEach((word) => box.append(element("option", {value: word}, word)));
  if (chosen !== undefined) box.value = chosen;
  box.addEventListener("change", onChange);
}

function showConventions(choices) {
  const box = byId("conventions");
  for (const [name, words] of Object.entries(choices)) {
    const label = element("label", {}, `${name} `);
    const list = element("select", {id: `convention-${name}`});
    const optional = !["ledger", "logits", "routing", "scales"].includes(name);
    if (optional) list.append(element("option", {value: ""}, "(spec's own)"));
    words.forEach((word) => list.append(element("option", {value: word}, word)));
    list.value = optional ? "" : {ledger: "chapter", logits: "last", routing: "uniform", scales: "logical"}[name];
    list.addEventListener("change", () => {
      if (list.value) state.conventions[name] = list.value; else delete state.conventions[name];
      recompile();
    });
    label.append(list);
    box.append(label);
  }
}

function showOptions(options, chosen) {
  const box = byId("options");
  box.replaceChildren();
  for (const [name, words] of Object.entries(options)) {
    const label = element("label", {}, `option ${name} `);
    const list = element("select", {id: `option-${name}`});
    words.forEach((word) => list.append(element("option", {value: word}, word)));
    list.value = state.options[name] || chosen[name];
    list.addEventListener("change", () => { state.options[name] = list.value; recompile(); });
    label.append(list);
    box.append(label);
  }
}

function wireTabs() {
  document.querySelectorAll("#tabs button").forEach((button) => button.addEventListener("click", () => {
    state.tab = button.dataset.tab;
    document.querySelectorAll("#tabs button").forEach((b) => b.classList.toggle("active", b === button));
    document.querySelectorAll(".tab").forEach((tab) => { tab.hidden = tab.id !== `tab-${state.tab}`; });
    if (state.tab === "diagram") diagram();
    if (state.tab === "formulas") formulas();
    if (state.tab === "plots") plots();
  }));
  document.querySelectorAll('input[name="view"]').forEach((radio) => radio.addEventListener("change", () => {
    state.view = radio.value; diagram();
  }));
  byId("diagram-fit").addEventListener("click", () => { if (state.pan) { state.pan.resize(); state.pan.fit(); state.pan.center(); } });
  byId("compare-run").addEventListener("click", compare);
  byId("layout-run").addEventListener("click", layout);
}

function openSpec(name) {
  state.source = name || null;
  state.options = {};
  state.picked = null;
  byId("node-panel").hidden = true;
  editor.setValue(name ? catalogueText(name) : "");
}

function showCatalogue(catalogue) {
  const picker = byId("spec-picker");
  picker.append(element("option", {value: ""}, "(new spec)"));
  catalogue.specs.forEach((s) => picker.append(element("option", {value: s.name}, s.name)));
  picker.addEventListener("change", () => openSpec(picker.value));
  const list = byId("stdlib-list");
  for (const file of catalogue.stdlib) {
    const item = element("li", {}, file.name);
    item.addEventListener("click", () => { byId("stdlib-text").textContent = file.text; });
    list.append(item);
  }
  const compareBox = byId("compare-specs");
  const choice = (value, text, checked) => {
    const label = element("label"); const box = element("input", {type: "checkbox", value});
    box.checked = checked; label.append(box, ` ${text}`); compareBox.append(label);
  };
  const five = element("button", {id: "compare-chapter"}, "the chapter's five");
  five.addEventListener("click", () => {  // the README's main job: seed 002's five models side by side
    compareBox.querySelectorAll("input").forEach((box) => { box.checked = CHAPTER_FIVE.includes(box.value); });
    compare();
  });
  compareBox.append(five);
  choice("", "this editor", true);
  catalogue.specs.forEach((s) => choice(s.name, s.name, false));
  // a filter over the specs' names: forty-odd checkboxes are read by typing a part of a name, not by eye
  const filter = element("input", {id: "compare-filter", class: "compare-filter", type: "search",
                                   placeholder: "filter specs, e.g. qwen or v4"});
  filter.addEventListener("input", () => {
    const words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
    compareBox.querySelectorAll("label").forEach((label) => {
      const box = label.querySelector("input");
      const shown = box.checked || words.every((w) => label.textContent.toLowerCase().includes(w));
      label.hidden = !shown;
    });
  });
  compareBox.before(filter);
  select("phase", catalogue.phases, "prefill", () => refresh(false));
  select("compare-table", catalogue.tables, "summary", () => {});
  select("plot-device", catalogue.devices, "h100_sxm", plots);
  select("layout-device", catalogue.devices, "", () => {});
  select("layout-link", catalogue.links, "", () => {});
  showConventions(catalogue.conventions);
}

async function start() {
  state.catalogue = await (await fetch("/api/catalogue")).json();
  defineMode(state.catalogue.highlight);
  makeEditor();
  showCatalogue(state.catalogue);
  wireSliders(); wireTabs(); wireDrop();
  const first = state.catalogue.specs.find((s) => s.named) || state.catalogue.specs.find((s) => s.name.endsWith("qwen3-8b.arch"));
  if (first) { byId("spec-picker").value = first.name; openSpec(first.name); }
}

start();
