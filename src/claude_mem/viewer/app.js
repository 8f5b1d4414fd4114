// The claude-mem viewer: the feed, sessions, stats and settings views over the worker's HTTP API,
// kept live by its SSE stream. This module wires them: the address bar, the filters, the stream.
import { $, api, debounce, notice } from "./api.js";
import * as feed from "./feed.js";
import * as forgetting from "./forget.js";
import * as keys from "./keys.js";
import * as render from "./render.js";
import * as sessions from "./sessions.js";
import * as settings from "./settings.js";
import { filters } from "./state.js";
import * as stats from "./stats.js";
import * as themes from "./themes.js";
import * as url from "./url.js";
import * as worker from "./worker.js";

const TYPES = ["bugfix", "feature", "refactor", "change", "discovery", "decision"];
const VIEW_OF_SECTION = { feed: "feed", sessions: "sessions", session: "sessions", stats: "stats", settings: "settings" };
let disconnected = false;

function syncControls() {
  $("project").value = filters.project;
  $("type").value = filters.type;
  $("author").value = filters.author;
  $("mode").value = filters.mode;
  if ($("search").value.trim() !== filters.q) $("search").value = filters.q;
  for (const link of document.querySelectorAll(".views a")) {
    const view = link.dataset.view;
    link.href = url.href({ ...filters, view });
    if (VIEW_OF_SECTION[filters.view] === view) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  $("session-back").href = url.href({ ...filters, view: "sessions" });
}

// Shows the view the filters name, loading what it needs.
function apply() {
  document.body.dataset.view = filters.view;
  for (const section of document.querySelectorAll("main > .view")) section.hidden = section.id !== `view-${filters.view}`;
  syncControls();
  const titles = { feed: "", sessions: "Sessions", session: "Session", stats: "Stats", settings: "Settings" };
  document.title = titles[filters.view] ? `${titles[filters.view]} · claude-mem` : "claude-mem";
  if (filters.view === "feed") feed.show();
  else if (filters.view === "sessions") sessions.showList();
  else if (filters.view === "session") sessions.showSession();
  else if (filters.view === "stats") stats.show();
  else settings.show();
}

// Changes filters and the address; `push` for a new history entry, not for each typed letter.
function navigate(changes, push = true) {
  Object.assign(filters, changes);
  if (filters.view !== "session") filters.session = "";
  url.write(push);
  apply();
}

function removeEverywhere(removed) {
  feed.forgotten(removed);
  sessions.forgotten(removed);
  stats.stale();
  worker.refreshProjects();
}

function askForget(target, name) {
  forgetting.forget(target, name, removeEverywhere).then((done) => {
    if (done && target.project) navigate({ project: "" });
  }).catch((error) => notice(`Could not prepare to forget: ${error.message}`));
}

// A row written by anyone (the observer, a hook, the CLI, an import): the totals beside the feed count
// every project, so they are read again whether or not the feed shows the row.
function live(kind, row) {
  feed.live(kind, row);
  worker.refreshProjects();
  sessions.stale();
  stats.stale();
}

function connect() {
  const stream = new EventSource("/stream");
  stream.addEventListener("open", () => {
    worker.setConnected(true);
    if (disconnected) {
      disconnected = false;
      worker.forgetCounts();
      worker.refreshProjects();
      settings.reconnected();
      feed.catchUp().catch((error) => notice(`Could not catch up: ${error.message}`));
    }
  });
  stream.addEventListener("error", () => {
    disconnected = true;
    worker.setConnected(false);
    // The browser retries a dropped stream itself; a refused one (CLOSED) needs a new EventSource.
    if (stream.readyState === EventSource.CLOSED) setTimeout(connect, 3000);
  });
  for (const kind of ["observation", "summary", "prompt"]) {
    stream.addEventListener(kind, (event) => live(kind, JSON.parse(event.data)));
  }
  stream.addEventListener("forget", (event) => removeEverywhere(JSON.parse(event.data)));
  stream.addEventListener("queue", (event) => worker.showCounts(JSON.parse(event.data)));
  stream.addEventListener("health", (event) => worker.showHealth(JSON.parse(event.data)));
}

function installControls() {
  $("type").append(...TYPES.map((type) => Object.assign(render.el("option", "", type), { value: type })));
  $("project").addEventListener("change", (event) => navigate({ project: event.target.value }));
  $("type").addEventListener("change", (event) => navigate({ type: event.target.value }));
  $("author").addEventListener("change", (event) => navigate({ author: event.target.value }));
  $("mode").addEventListener("change", (event) => navigate({ mode: event.target.value }));
  // Typing replaces the address (no history entry per letter); a search starts from the feed.
  $("search").addEventListener("input", debounce((event) => {
    const q = event.target.value.trim();
    if (q === filters.q) return;
    const fresh = !filters.q && filters.view === "feed";
    navigate({ q, view: "feed" }, fresh || filters.view !== "feed");
  }, 250));
  // In-page links change the view without a reload; modified clicks keep the browser's behaviour.
  document.addEventListener("click", (event) => {
    const link = event.target.closest("a[href^='?'], .views a, #session-back, a[data-internal]");
    if (!link || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    const target = new URL(link.href);
    if (target.search === window.location.search) return;
    window.history.pushState(null, "", target.search || window.location.pathname);
    Object.assign(filters, url.read());
    apply();
  });
  window.addEventListener("popstate", () => {
    Object.assign(filters, url.read());
    apply();
  });
}

function start() {
  Object.assign(filters, url.read());
  installControls();
  themes.install();
  keys.install(() => navigate({ q: "" }, true));
  worker.install();
  feed.install(askForget);
  sessions.install(askForget);
  settings.install();
  stats.install();
  setInterval(() => render.refreshTimes(document), 30000);
  worker.refreshTeam().catch(() => {});
  worker.refreshProjectsNow().catch((error) => notice(`Could not list projects: ${error.message}`)).finally(apply);
  api("/health").then(worker.showHealth).catch(() => worker.setConnected(false));
  connect();
}

start();
