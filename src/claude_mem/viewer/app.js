// The claude-mem viewer: a live feed of memory from the worker's HTTP API and SSE stream.
import * as render from "./render.js";

const PAGE = 20;
const SOURCES = [["observation", "/api/observations"], ["summary", "/api/summaries"], ["prompt", "/api/prompts"]];
const $ = (id) => document.getElementById(id);

const state = {
  project: "", query: "", mode: "", names: new Map(), shown: new Set(), sources: [], generation: 0,
  searchOffset: 0, searchTotal: 0, failedCount: null, disconnected: false, started: false,
};

async function api(path, options = {}) {
  const headers = { accept: "application/json" };
  if (options.body) headers["content-type"] = "application/json";
  const response = await fetch(path, { ...options, headers });
  const body = await response.json().catch(() => null);
  if (!response.ok) throw new Error(body?.error?.message || `${response.status} ${response.statusText}`);
  return body;
}

function notice(message) {
  const node = $("notice");
  node.textContent = message;
  node.hidden = false;
  clearTimeout(notice.timer);
  notice.timer = setTimeout(() => { node.hidden = true; }, 8000);
}

function projectName(key) {
  return state.names.get(key) || render.basename(key);
}

function debounce(fn, ms) {
  let timer;
  return (...args) => { clearTimeout(timer); timer = setTimeout(() => fn(...args), ms); };
}

// ---- feed ------------------------------------------------------------------------------------

function addItem(item, sorted) {
  const key = `${item.kind}:${item.id}`;
  if (state.shown.has(key)) return false;
  state.shown.add(key);
  const node = render.card(item, projectName);
  const feed = $("feed");
  // Live and caught-up items go where their time puts them; a page of the feed is already in order.
  const before = sorted ? [...feed.children].find((child) => child.dataset.created < (item.created_at || "")) : null;
  feed.insertBefore(node, before || null);
  $("empty").hidden = true;
  $("no-results").hidden = true;
  return true;
}

async function fill(source, generation) {
  const params = new URLSearchParams({ limit: PAGE, offset: source.offset });
  if (state.project) params.set("project", state.project);
  const page = await api(`${source.path}?${params}`);
  if (generation !== state.generation) return;
  source.offset += page.items.length;
  source.buffer.push(...page.items.map((item) => ({ ...item, kind: source.kind })));
  source.done = page.items.length === 0 || source.offset >= page.total;
}

// The next page of the merged feed: repeatedly take the newest head of the three lists.
async function loadFeed(generation) {
  let added = 0;
  while (added < PAGE) {
    await Promise.all(state.sources.filter((s) => !s.buffer.length && !s.done).map((s) => fill(s, generation)));
    if (generation !== state.generation) return;
    const ready = state.sources.filter((s) => s.buffer.length);
    if (!ready.length) break;
    const next = ready.reduce((a, b) => (a.buffer[0].created_at >= b.buffer[0].created_at ? a : b));
    if (addItem(next.buffer.shift(), false)) added += 1;
  }
  $("more").hidden = state.sources.every((s) => s.done && !s.buffer.length);
  finishLoad();
}

async function loadSearch(generation) {
  const params = new URLSearchParams({ q: state.query, kind: "observation,summary,prompt", limit: PAGE,
    offset: state.searchOffset });
  if (state.project) params.set("project", state.project);
  if (state.mode) params.set("mode", state.mode);
  const page = await api(`/api/search?${params}`);
  if (generation !== state.generation) return;
  state.searchOffset += page.items.length;
  state.searchTotal = page.total;
  page.items.forEach((item) => addItem(item, false));
  $("more").hidden = state.searchOffset >= page.total || !page.items.length;
  finishLoad();
}

function finishLoad() {
  const count = state.shown.size;
  const empty = count === 0;
  $("empty").hidden = !(empty && !state.query && !state.project);
  const none = $("no-results");
  none.hidden = !(empty && (state.query || state.project));
  none.textContent = state.query ? "Nothing matches this search." : "Nothing stored for this project yet.";
  $("feed-count").textContent = state.query ? `${state.searchTotal} match${state.searchTotal === 1 ? "" : "es"}`
    : count ? `${count} shown` : "";
}

function loadMore() {
  const generation = state.generation;
  const button = $("more");
  button.disabled = true;
  (state.query ? loadSearch(generation) : loadFeed(generation))
    .catch((error) => notice(`Could not load: ${error.message}`))
    .finally(() => { button.disabled = false; });
}

function reset() {
  state.generation += 1;
  state.shown.clear();
  $("feed").replaceChildren();
  $("more").hidden = true;
  state.searchOffset = 0;
  state.sources = SOURCES.map(([kind, path]) => ({ kind, path, offset: 0, buffer: [], done: false }));
  $("feed-title").textContent = state.query ? "Search results" : "Live feed";
  loadMore();
}

function live(kind, row) {
  if (state.query || (state.project && row.project !== state.project)) return;
  if (addItem({ ...row, kind }, true)) {
    finishLoad();
    refreshProjects();
  }
}

// Items stored while the stream was down: insert those newer than the oldest one shown.
async function catchUp() {
  if (state.query) return;
  const oldest = $("feed").lastElementChild?.dataset.created || "";
  for (const [kind, path] of SOURCES) {
    const params = new URLSearchParams({ limit: PAGE });
    if (state.project) params.set("project", state.project);
    const page = await api(`${path}?${params}`);
    page.items.filter((item) => item.created_at >= oldest).forEach((item) => addItem({ ...item, kind }, true));
  }
  finishLoad();
}

async function toggle(card) {
  const head = card.querySelector(".card-head");
  const box = card.querySelector(".details");
  const open = head.getAttribute("aria-expanded") !== "true";
  head.setAttribute("aria-expanded", String(open));
  box.hidden = !open;
  if (!open || box.dataset.loaded) return;
  box.dataset.loaded = "1";
  const [kind, id] = card.dataset.key.split(":");
  const ref = { observation: id, summary: `S${id}`, prompt: `P${id}` }[kind];
  try {
    const row = kind === "observation" ? await api(`/api/observations/${id}`)
      : (await api("/api/observations/batch", { method: "POST", body: JSON.stringify({ ids: [ref] }) })).items[0];
    const link = render.el("button", "link timeline-link", "Timeline around it");
    link.type = "button";
    link.addEventListener("click", () => showTimeline(box, ref, link));
    box.replaceChildren(render.details(row, !!card.querySelector(":scope > .fields")), link);
  } catch (error) {
    delete box.dataset.loaded;
    box.replaceChildren(render.el("p", "error", `Could not load it: ${error.message}`));
  }
}

async function showTimeline(box, ref, link) {
  link.disabled = true;
  try {
    const result = await api(`/api/timeline?${new URLSearchParams({ anchor: ref, before: 5, after: 5 })}`);
    link.replaceWith(render.timeline(result, projectName));
  } catch (error) {
    link.disabled = false;
    notice(`Could not load the timeline: ${error.message}`);
  }
}

// ---- worker state ----------------------------------------------------------------------------

function showHealth(health) {
  const provider = health.provider || { name: "?", ok: false, reason: "" };
  const badge = $("health");
  badge.classList.toggle("ok", !!provider.ok);
  badge.classList.toggle("warn", !provider.ok);
  badge.classList.remove("down");
  badge.querySelector(".badge-text").textContent = `${provider.name} · ${provider.ok ? "observing" : "not observing"}`;
  badge.title = provider.reason || "the observer is working";
  $("provider").textContent = provider.ok ? `${provider.name}: working` : `${provider.name}: ${provider.reason}`;
  $("provider").classList.toggle("warn-text", !provider.ok);
  if ("warnings" in health) showSettingsWarnings(health.warnings);
  showCounts(health.queue);
}

// Refused settings (a bad value in settings.json or the environment): the worker uses another value.
function showSettingsWarnings(warnings) {
  const list = Array.isArray(warnings) ? warnings : [];
  $("settings-warnings-list").replaceChildren(...list.map((text) => render.el("li", "", text)));
  $("settings-warnings").hidden = list.length === 0;
}

function showCounts(queue) {
  $("counts").replaceWith(Object.assign(render.counts(queue), { id: "counts" }));
  const failed = queue ? queue.failed : 0;
  $("health").classList.toggle("has-failed", failed > 0);
  const flag = $("health").querySelector(".badge-failed");
  flag.hidden = !(failed > 0);
  flag.textContent = `${failed} failed`;
  if (failed !== state.failedCount) {
    state.failedCount = failed;
    loadFailed();
  }
}

async function loadFailed() {
  try {
    const queue = await api("/api/queue?status=failed&limit=50");
    const items = queue.items.map((event) => render.failedEvent(event, projectName, retry));
    $("failed").replaceChildren(...items);
    $("queue-empty").hidden = items.length > 0;
    $("retry-all").hidden = items.length < 2;
  } catch (error) {
    notice(`Could not read the queue: ${error.message}`);
  }
}

async function retry(id, button) {
  if (button) button.disabled = true;
  try {
    const result = await api("/api/queue/retry", { method: "POST",
      body: JSON.stringify(id === "all" ? { all: true } : { ids: [id] }) });
    state.failedCount = null;
    showCounts(result.counts);
  } catch (error) {
    if (button) button.disabled = false;
    notice(`Retry failed: ${error.message}`);
  }
}

async function refreshProjectsNow() {
  const { items } = await api("/api/projects");
  state.names = new Map(items.map((p) => [p.project, p.name]));
  const select = $("project");
  const options = items.map((p) => Object.assign(render.el("option", "", p.name), { value: p.project }));
  select.replaceChildren(Object.assign(render.el("option", "", "All projects"), { value: "" }), ...options);
  select.value = state.project;
  const sum = (name) => items.reduce((total, p) => total + (p[name] || 0), 0);
  const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
  $("totals").textContent = items.length
    ? `${plural(sum("observations"), "observation")}, ${plural(sum("summaries"), "summary").replace("summarys", "summaries")}`
      + ` and ${plural(sum("prompts"), "prompt")} from ${plural(sum("sessions"), "session")} in ${plural(items.length, "project")}.`
    : "Nothing stored yet.";
}

const refreshProjects = debounce(() => refreshProjectsNow().catch(() => {}), 1500);

function setConnected(connected) {
  $("banner").hidden = connected;
  if (!connected) {
    const badge = $("health");
    badge.classList.remove("ok", "warn");
    badge.classList.add("down");
    badge.querySelector(".badge-text").textContent = "disconnected";
  }
}

function connect() {
  const stream = new EventSource("/stream");
  stream.addEventListener("open", () => {
    setConnected(true);
    if (state.disconnected) {
      state.disconnected = false;
      state.failedCount = null;
      refreshProjects();
      catchUp().catch((error) => notice(`Could not catch up: ${error.message}`));
    }
  });
  stream.addEventListener("error", () => {
    state.disconnected = true;
    setConnected(false);
    // The browser retries a dropped stream itself; a refused one (CLOSED) needs a new EventSource.
    if (stream.readyState === EventSource.CLOSED) setTimeout(connect, 3000);
  });
  for (const kind of ["observation", "summary", "prompt"]) {
    stream.addEventListener(kind, (event) => live(kind, JSON.parse(event.data)));
  }
  stream.addEventListener("queue", (event) => showCounts(JSON.parse(event.data)));
  stream.addEventListener("health", (event) => showHealth(JSON.parse(event.data)));
}

function start() {
  $("project").addEventListener("change", (event) => { state.project = event.target.value; reset(); });
  $("mode").addEventListener("change", (event) => { state.mode = event.target.value; if (state.query) reset(); });
  $("search").addEventListener("input", debounce((event) => {
    const query = event.target.value.trim();
    if (query !== state.query) { state.query = query; reset(); }
  }, 250));
  $("more").addEventListener("click", loadMore);
  $("retry-all").addEventListener("click", (event) => retry("all", event.target));
  $("feed").addEventListener("click", (event) => {
    const head = event.target.closest(".card-head");
    if (head) toggle(head.closest(".card"));
  });
  setInterval(() => render.refreshTimes(document), 30000);
  refreshProjectsNow().catch((error) => notice(`Could not list projects: ${error.message}`)).finally(reset);
  api("/health").then(showHealth).catch(() => setConnected(false));
  connect();
}

start();
