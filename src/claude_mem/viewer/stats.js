// The stats view: what memory costs (observer tokens per day and per tool event), what it saves
// (the index injected at session start against the narratives it stands for) and whether it is used
// (what sessions were shown, and used of it: fetched, found by a search, cited), per project or overall.
import { $, api, debounce, notice, plural, query } from "./api.js";
import * as chart from "./chart.js";
import * as failures from "./failures.js";
import * as render from "./render.js";
import { filters, projectName } from "./state.js";

const TYPES = ["bugfix", "feature", "refactor", "change", "discovery", "decision"];
const DAYS = 30;
let shownFor = null;
let usage = null;
let inUse = null;
let recurring = null; // /api/failures: recurring failures and their fixes (failures.js)

const number = (n) => Number(n || 0).toLocaleString("en");

function tile(label, value, note) {
  const box = render.el("div", "tile");
  box.append(render.el("span", "tile-label", label), render.el("strong", "tile-value", value));
  if (note) box.append(render.el("span", "tile-note", note));
  return box;
}

function figure(titleText, graphic, summary, legendSeries) {
  const box = render.el("figure", "panel chart-box");
  box.append(render.el("figcaption", "", titleText));
  if (legendSeries) box.append(chart.legend(legendSeries));
  box.append(graphic, render.el("p", "chart-summary", summary));
  return box;
}

function chartWidth() {
  const width = $("stats").clientWidth;
  return Math.max(260, Math.min(width, 1100) - 32);
}

function typeSeries(data) {
  const found = new Set(data.observations_per_day.map((row) => row.type));
  const types = [...TYPES.filter((type) => found.has(type)), ...[...found].filter((type) => !TYPES.includes(type)).sort()];
  const index = new Map(data.days.map((day, i) => [day, i]));
  return types.map((type) => {
    const values = data.days.map(() => 0);
    for (const row of data.observations_per_day) if (row.type === type && index.has(row.day)) values[index.get(row.day)] += row.count;
    return { name: TYPES.includes(type) ? type : "other", label: type, values };
  });
}

function observationsFigure(data, width) {
  const series = typeSeries(data);
  const total = series.reduce((sum, s) => sum + s.values.reduce((a, b) => a + b, 0), 0);
  const ranked = series.map((s) => [s.label, s.values.reduce((a, b) => a + b, 0)]).sort((a, b) => b[1] - a[1]);
  const summary = total ? `${plural(total, "observation")} in ${data.days.length} days: `
      + ranked.map(([type, n]) => `${type} ${number(n)}`).join(", ") + "."
    : `No observations in the last ${data.days.length} days.`;
  const graphic = chart.stackedBars({ days: data.days, series, width, title: "Observations by type per day",
    description: summary });
  return figure("Observations by type, per day", graphic, summary, series);
}

function tokensFigure(data, width) {
  const index = new Map(data.days.map((day, i) => [day, i]));
  const input = data.days.map(() => 0);
  const output = data.days.map(() => 0);
  for (const row of data.observer_tokens_per_day) {
    if (!index.has(row.day)) continue;
    input[index.get(row.day)] += row.input || 0;
    output[index.get(row.day)] += row.output || 0;
  }
  const series = [{ name: "input", label: "input tokens", values: input }, { name: "output", label: "output tokens", values: output }];
  const summary = `The observer read ${number(data.observer_input_tokens)} and wrote ${number(data.observer_output_tokens)} tokens`
    + ` for ${plural(data.tool_events || 0, "tool event")}: ${number(Math.round(data.tokens_per_event || 0))} tokens per event.`;
  const graphic = chart.stackedBars({ days: data.days, series, width, title: "Observer tokens per day",
    description: summary, unit: " tokens" });
  return figure("Observer tokens, per day", graphic, summary, series);
}

function indexFigure(data, width) {
  const { injected_tokens: injected = 0, narrative_tokens: narratives = 0, observations = 0 } = data.index || {};
  const items = [{ name: "injected", label: "Index injected at session start", value: injected },
    { name: "narratives", label: "Narratives it stands for", value: narratives }];
  const saved = narratives > 0 ? Math.max(0, 1 - injected / narratives) : 0;
  const summary = narratives
    ? `The index of ${plural(observations, "observation")} costs ~${number(injected)} tokens at session start; their`
      + ` narratives hold ~${number(narratives)}. Progressive disclosure leaves ${Math.round(saved * 100)}% of them`
      + " out until Claude asks for one."
    : "No narratives stored yet: the index has nothing to stand for.";
  const graphic = chart.comparison({ items, width, title: "Index against narratives", description: summary, unit: " tokens" });
  return figure("What the index saves", graphic, summary);
}

function useFigure(data, use, width) {
  const index = new Map(data.days.map((day, i) => [day, i]));
  const used = data.days.map(() => 0);
  const unused = data.days.map(() => 0);
  for (const row of use.per_day || []) {
    if (!index.has(row.day)) continue;
    used[index.get(row.day)] += row.used_of_shown || 0;
    unused[index.get(row.day)] += Math.max(0, (row.shown || 0) - (row.used_of_shown || 0));
  }
  const series = [{ name: "used", label: "shown, then used", values: used },
    { name: "unused", label: "shown, not used", values: unused }];
  const shown = used.reduce((a, b) => a + b, 0) + unused.reduce((a, b) => a + b, 0);
  const usedTotal = used.reduce((a, b) => a + b, 0);
  const summary = shown
    ? `Sessions were shown ${plural(shown, "memory", "memories")} in ${data.days.length} days and used`
      + ` ${number(usedTotal)} of them (${Math.round((100 * usedTotal) / shown)}%). Uses: fetched ${number(use.by_how.fetched)},`
      + ` found by a search ${number(use.by_how.searched)}, cited ${number(use.by_how.cited)};`
      + ` ${number(use.tokens_injected)} tokens injected.`
    : `No session was shown memory in the last ${data.days.length} days.`;
  const graphic = chart.stackedBars({ days: data.days, series, width, title: "Memory shown and used per day",
    description: summary, unit: " memories" });
  return figure("Memory in use, per day", graphic, summary, series);
}

function useList(titleText, rows, empty, describe) {
  const box = render.el("section", "panel use-list");
  box.append(render.el("h2", "", titleText));
  if (!rows || !rows.length) {
    box.append(render.el("p", "muted", empty));
    return box;
  }
  const list = render.el("ol", "use-rows");
  for (const row of rows) {
    const item = render.el("li", "use-row");
    item.append(render.el("span", "use-ref", `#${row.id}`), render.badge("observation", row.type),
      render.el("span", "use-title", row.title), render.el("span", "use-count muted", describe(row)));
    list.append(item);
  }
  box.append(list);
  return box;
}

function useLists(use) {
  const box = render.el("div", "use-lists");
  box.append(
    useList("Most used memories", use.most_used, "No memory was used in these days.",
      (row) => `used in ${plural(row.used, "session")} · shown in ${number(row.shown)}`),
    useList("Shown most, never used", use.least_used, "Every memory shown was used.",
      (row) => `shown in ${plural(row.shown, "session")}`),
  );
  return box;
}

// The observer's ledger (`usage.observer_spend`): per day and provider, its requests and tokens, and the
// batches the offline observer took because a token budget was spent; newest day first.
function spendFigure(data) {
  const rows = [...(data.observer_spend || [])].sort((a, b) => b.day.localeCompare(a.day));  // stable: providers stay in order
  const box = render.el("figure", "panel chart-box spend");
  box.append(render.el("figcaption", "", "Observer spend, per day and provider"));
  if (!rows.length) {
    box.append(render.el("p", "chart-summary", `No observer requests in the last ${data.days.length} days.`));
    return box;
  }
  const cells = (tag, values) => {
    const tr = render.el("tr");
    tr.append(...values.map((value, i) => render.el(tag, i > 1 ? "num" : "", value)));
    return tr;
  };
  const table = render.el("table", "spend-table");
  table.append(cells("th", ["Day", "Provider", "Requests", "Input tokens", "Output tokens", "Over budget"]),
    ...rows.map((row) => cells("td", [row.day, row.provider, number(row.requests), number(row.input),
      number(row.output), number(row.over_budget)])));
  const offline = rows.reduce((sum, row) => sum + (row.over_budget || 0), 0);
  const summary = `${plural(rows.reduce((sum, row) => sum + row.requests, 0), "request")} over ${plural(new Set(rows.map((row) => row.day)).size, "day")}`
    + (offline ? `; ${plural(offline, "batch", "batches")} observed offline because a token budget was spent.` : "; no budget was spent.");
  box.append(table, render.el("p", "chart-summary", summary));
  return box;
}

function draw(data) {
  const width = chartWidth();
  const fetches = data.fetches || {};
  const idx = data.index || {};
  const ratio = idx.narrative_tokens && idx.injected_tokens ? `${(idx.narrative_tokens / idx.injected_tokens).toFixed(1)}×` : "–";
  const totalObservations = data.observations_per_day.reduce((sum, row) => sum + row.count, 0);
  const tiles = render.el("div", "tiles");
  tiles.append(
    tile("Observations", number(totalObservations), `last ${data.days.length} days`),
    tile("Tool events", number(data.tool_events), "captured and observed"),
    tile("Observer tokens", `${chart.compact(data.observer_input_tokens)} / ${chart.compact(data.observer_output_tokens)}`, "input / output"),
    tile("Tokens per tool event", number(Math.round(data.tokens_per_event || 0)), "input + output"),
    tile("Index vs narratives", ratio, `${chart.compact(idx.injected_tokens)} instead of ${chart.compact(idx.narrative_tokens)} tokens`),
    tile("MCP fetches per observation", Number(fetches.per_observation || 0).toFixed(2),
      `${plural(fetches.fetches || 0, "fetch", "fetches")} of ${plural(fetches.observations || 0, "observation")}`),
  );
  const parts = [tiles, observationsFigure(data, width), tokensFigure(data, width), indexFigure(data, width)];
  if (inUse) {
    const rate = inUse.use_rate === null || inUse.use_rate === undefined ? "–" : `${Math.round(inUse.use_rate * 100)}%`;
    tiles.append(
      tile("Memory used", rate, `${number(inUse.used_of_shown)} of ${number(inUse.shown)} shown`),
      tile("Sessions given memory", number(inUse.sessions), `${chart.compact(inUse.tokens_injected)} tokens injected`),
    );
    parts.push(useFigure(data, inUse, width), useLists(inUse));
  }
  parts.push(spendFigure(data));
  if (recurring) parts.push(failures.panel(recurring));
  $("stats").replaceChildren(...parts);
}

async function load() {
  const wanted = filters.project;
  $("stats-scope").textContent = wanted ? projectName(wanted) : "all projects";
  const [stats, failed] = await Promise.all([api(`/api/stats?${query({ project: wanted, days: DAYS })}`),
    api(`/api/failures?${query({ project: wanted })}`).catch(() => null)]);
  if (wanted !== filters.project) return;
  recurring = failed ? failed.failures : null;
  usage = stats.usage;
  inUse = stats.in_use || null;
  if (!usage) {
    $("stats").replaceChildren(render.el("p", "muted", "This worker reports no usage figures (an older version?)."));
    return;
  }
  draw(usage);
}

export function show() {
  if (shownFor === filters.project) return;
  shownFor = filters.project;
  load().catch((error) => {
    shownFor = null;
    notice(`Could not load the stats: ${error.message}`);
  });
}

// New memory or forgotten memory changes the figures: the next visit loads them again.
export function stale() {
  shownFor = null;
}

export function install() {
  window.addEventListener("resize", debounce(() => {
    if (usage && !$("view-stats").hidden) draw(usage);
  }, 200));
}
