// The feed view: observations, summaries and prompts merged newest first, or search results;
// live items from the stream go where their time puts them.
import { $, api, notice, query } from "./api.js";
import * as cards from "./cards.js";
import * as render from "./render.js";
import { filters, observationsOnly, projectName } from "./state.js";

const PAGE = 20;
const SOURCES = [["observation", "/api/observations"], ["summary", "/api/summaries"], ["prompt", "/api/prompts"]];

const feed = { shown: new Set(), sources: [], generation: 0, searchOffset: 0, searchTotal: 0, searchCapped: false,
  loadedFor: null };

// Summaries and prompts have no observation type: a type or author filter shows observations only.
function sources() {
  return SOURCES.filter(([kind]) => !observationsOnly() || kind === "observation");
}

function listParams(extra) {
  return query({ project: filters.project, ...extra });
}

function addItem(item, sorted) {
  const key = `${item.kind}:${item.id}`;
  if (feed.shown.has(key)) return false;
  feed.shown.add(key);
  const node = render.card(item, projectName);
  const list = $("feed");
  // Live and caught-up items go where their time puts them; a page of the feed is already in order.
  const before = sorted ? [...list.children].find((child) => child.dataset.created < (item.created_at || "")) : null;
  list.insertBefore(node, before || null);
  $("empty").hidden = true;
  $("no-results").hidden = true;
  return true;
}

async function fill(source, generation) {
  const extra = { limit: PAGE, offset: source.offset };
  if (source.kind === "observation") Object.assign(extra, { type: filters.type, author: filters.author });
  const page = await api(`${source.path}?${listParams(extra)}`);
  if (generation !== feed.generation) return;
  source.offset += page.items.length;
  source.buffer.push(...page.items.map((item) => ({ ...item, kind: source.kind })));
  source.done = page.items.length === 0 || source.offset >= page.total;
}

// The next page of the merged feed: repeatedly take the newest head of the lists.
async function loadFeed(generation) {
  let added = 0;
  while (added < PAGE) {
    await Promise.all(feed.sources.filter((s) => !s.buffer.length && !s.done).map((s) => fill(s, generation)));
    if (generation !== feed.generation) return;
    const ready = feed.sources.filter((s) => s.buffer.length);
    if (!ready.length) break;
    const next = ready.reduce((a, b) => (a.buffer[0].created_at >= b.buffer[0].created_at ? a : b));
    if (addItem(next.buffer.shift(), false)) added += 1;
  }
  $("more").hidden = feed.sources.every((s) => s.done && !s.buffer.length);
  finishLoad();
}

async function loadSearch(generation) {
  const params = listParams({ q: filters.q, kind: observationsOnly() ? "observation" : "observation,summary,prompt,auto-memory",
    type: filters.type, author: filters.author, mode: filters.mode, limit: PAGE, offset: feed.searchOffset });
  const page = await api(`/api/search?${params}`);
  if (generation !== feed.generation) return;
  feed.searchOffset += page.items.length;
  feed.searchTotal = page.total;
  feed.searchCapped = Boolean(page.total_capped); // counting stopped there: at least that many match
  page.items.forEach((item) => addItem(item, false));
  $("more").hidden = (feed.searchOffset >= page.total && !feed.searchCapped) || !page.items.length;
  finishLoad();
}

function finishLoad() {
  const count = feed.shown.size;
  const empty = count === 0;
  const filtered = filters.q || filters.project || observationsOnly();
  $("empty").hidden = !(empty && !filtered);
  const none = $("no-results");
  none.hidden = !(empty && filtered);
  none.textContent = filters.q ? "Nothing matches this search."
    : observationsOnly() ? `No ${filters.type || ""} observations${filters.author ? ` by ${filters.author}` : ""}`
      + ` stored${filters.project ? " for this project" : ""}.`
      : "Nothing stored for this project yet.";
  $("feed-count").textContent = filters.q
    ? `${feed.searchTotal}${feed.searchCapped ? "+" : ""} match${feed.searchTotal === 1 && !feed.searchCapped ? "" : "es"}`
    : count ? `${count} shown` : "";
}

function loadMore() {
  const generation = feed.generation;
  const button = $("more");
  button.disabled = true;
  (filters.q ? loadSearch(generation) : loadFeed(generation))
    .catch((error) => notice(`Could not load: ${error.message}`))
    .finally(() => { button.disabled = false; });
}

function filterKey() {
  return JSON.stringify([filters.project, filters.type, filters.author, filters.mode, filters.q]);
}

// Loads the feed again when its filters changed since it was last shown.
export function show() {
  if (feed.loadedFor === filterKey()) return;
  feed.loadedFor = filterKey();
  feed.generation += 1;
  feed.shown.clear();
  $("feed").replaceChildren();
  $("more").hidden = true;
  feed.searchOffset = 0;
  feed.sources = sources().map(([kind, path]) => ({ kind, path, offset: 0, buffer: [], done: false }));
  $("feed-title").textContent = filters.q ? "Search results"
    : observationsOnly() ? `${filters.type || "All"} observations${filters.author ? ` by ${filters.author}` : ""}` : "Live feed";
  loadMore();
}

function matches(kind, row) {
  if (filters.q || (filters.project && row.project !== filters.project)) return false;
  if (!observationsOnly()) return true;
  return kind === "observation" && (!filters.type || row.type === filters.type)
    && (!filters.author || row.author === filters.author);
}

// A shown row that changed (redacted, or moved by a projects merge): drawn again, or gone when it no
// longer fits the filters. Search results keep their card (and its snippet).
function changed(kind, row) {
  const key = `${kind}:${Number(row.id)}`;
  const shown = filters.q ? null : $("feed").querySelector(`.card[data-key="${key}"]`);
  if (!shown) return false;
  if (matches(kind, row)) {
    shown.replaceWith(render.card({ ...row, kind }, projectName));
  } else {
    shown.remove();
    feed.shown.delete(key);
    finishLoad();
  }
  return true;
}

// A row from the stream (`op` "update" for one that changed); true when the loaded feed changed.
export function live(kind, row) {
  if (feed.loadedFor === null) return false;
  if (row.op === "update") return changed(kind, row);
  if (!matches(kind, row) || !addItem({ ...row, kind }, true)) return false;
  finishLoad();
  return true;
}

// Items stored while the stream was down: insert those newer than the oldest one shown.
export async function catchUp() {
  if (filters.q || feed.loadedFor === null) return;
  const oldest = $("feed").lastElementChild?.dataset.created || "";
  for (const [kind, path] of sources()) {
    const only = kind === "observation" ? { type: filters.type, author: filters.author } : {};
    const page = await api(`${path}?${listParams({ limit: PAGE, ...only })}`);
    page.items.filter((item) => item.created_at >= oldest).forEach((item) => addItem({ ...item, kind }, true));
  }
  finishLoad();
}

// Rows forgotten (here or in another viewer): their cards go.
export function forgotten(removed) {
  const gone = cards.removeForgotten($("feed"), removed);
  gone.forEach((key) => feed.shown.delete(key));
  if (filters.q) feed.searchTotal = Math.max(0, feed.searchTotal - gone.length);
  finishLoad();
}

export function install(onForget) {
  $("more").addEventListener("click", loadMore);
  cards.expandable($("feed"), onForget);
}
