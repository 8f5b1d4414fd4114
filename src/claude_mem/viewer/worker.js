// The worker's state beside the feed: observer health, queue counts, failed events, project totals.
import { $, api, coalesce, notice, plural } from "./api.js";
import * as render from "./render.js";
import { filters, names, projectName } from "./state.js";

let failedCount = null;

export function showHealth(health) {
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
  if ("degraded" in health) showDegraded(health.degraded);
  if ("vectors" in health) showVectors(health.vectors);
  if ("budget" in health) showBudget(health.budget);
  showCounts(health.queue);
}

// Why /health says "degraded" (a locked database, a failing observer, a full disk, a recovery …), in a
// banner above the feed; refused settings have their own banner. The stream sends health once, so
// /health is asked again every 10 s while degraded and every 30 s otherwise (a new problem shows up).
let degradedTimer = null;

function showDegraded(degraded) {
  const list = (Array.isArray(degraded) ? degraded : []).filter((item) => item && item.code !== "settings");
  $("degraded-list").replaceChildren(...list.map((item) => render.el("li", "", String(item.reason ?? item))));
  $("degraded").hidden = list.length === 0;
  clearTimeout(degradedTimer);
  degradedTimer = setTimeout(() => api("/health").then(showHealth).catch(() => {}), list.length ? 10_000 : 30_000);
}

// Search by meaning: how much is embedded, how fast the backfill goes, how long it has left; while the
// backfill runs, /health is asked again every 10 s (the stream sends health once, when it opens).
let vectorsTimer = null;

function showVectors(vectors) {
  clearTimeout(vectorsTimer);
  if (vectors && vectors.available && vectors.queued) {
    vectorsTimer = setTimeout(() => api("/health").then(showHealth).catch(() => {}), 10_000);
  }
  const line = $("meaning");
  line.hidden = !vectors;
  if (!vectors) return;
  if (!vectors.available) {
    line.textContent = `Search by meaning: off (${vectors.reason})`;
    return;
  }
  const done = vectors.embedded.toLocaleString();
  if (!vectors.queued) {
    line.textContent = `Search by meaning: all ${done} embedded`;
    return;
  }
  const eta = vectors.eta_s == null ? "" : ` · about ${vectors.eta_s < 90 ? `${vectors.eta_s} s` : `${Math.round(vectors.eta_s / 60)} min`} left`;
  const rate = vectors.rate ? ` · ${vectors.rate}/s` : "";
  line.textContent = `Search by meaning: ${done} of ${vectors.total.toLocaleString()} embedded${rate}${eta}`;
}

// The observer's token budgets: today's spend against the daily one, and whether (and until when) the
// offline observer stands in because a budget is spent; hidden while neither is set and nothing is spent.
function showBudget(budget) {
  const line = $("budget");
  const spent = budget ? Number(budget.spent_today || 0).toLocaleString("en") : "0";
  line.hidden = !budget || (!budget.daily_tokens && !budget.session_tokens && !budget.spent_today);
  if (line.hidden) return;
  const daily = budget.daily_tokens ? ` of ${Number(budget.daily_tokens).toLocaleString("en")}` : "";
  const session = budget.session_tokens ? `; ${Number(budget.session_tokens).toLocaleString("en")} a session` : "";
  const over = budget.state !== "ok";
  line.textContent = `Token budget: ${spent}${daily} tokens today (UTC)${session}`
    + (over ? ` · ${budget.state}: offline observer ${budget.state === "over daily budget"
      ? `until ${String(budget.resets_at).slice(0, 16).replace("T", " ")} UTC`
      : `for ${budget.sessions_over_budget} session(s)`}` : "");
  line.title = budget.reason || "";
  line.classList.toggle("warn-text", over);
}

// Refused settings (a bad value in settings.json or the environment): the worker uses another value.
function showSettingsWarnings(warnings) {
  const list = Array.isArray(warnings) ? warnings : [];
  $("settings-warnings-list").replaceChildren(...list.map((text) => render.el("li", "", text)));
  $("settings-warnings").hidden = list.length === 0;
}

export function showCounts(queue) {
  $("counts").replaceWith(Object.assign(render.counts(queue), { id: "counts" }));
  const failed = queue ? queue.failed : 0;
  $("health").classList.toggle("has-failed", failed > 0);
  const flag = $("health").querySelector(".badge-failed");
  flag.hidden = !(failed > 0);
  flag.textContent = `${failed} failed`;
  if (failed !== failedCount) {
    failedCount = failed;
    loadFailed();
  }
}

export function forgetCounts() {
  failedCount = null;
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
    failedCount = null;
    showCounts(result.counts);
  } catch (error) {
    if (button) button.disabled = false;
    notice(`Retry failed: ${error.message}`);
  }
}

export async function refreshProjectsNow() {
  const { items } = await api("/api/projects");
  names.clear();
  items.forEach((p) => names.set(p.project, p.name));
  const select = $("project");
  const options = items.map((p) => Object.assign(render.el("option", "", p.name), { value: p.project }));
  // A project in the address that has nothing stored (yet, or any more) stays selectable.
  if (filters.project && !names.has(filters.project)) {
    options.push(Object.assign(render.el("option", "", render.basename(filters.project)), { value: filters.project }));
  }
  select.replaceChildren(Object.assign(render.el("option", "", "All projects"), { value: "" }), ...options);
  select.value = filters.project;
  const sum = (name) => items.reduce((total, p) => total + (p[name] || 0), 0);
  $("totals").textContent = items.length
    ? `${plural(sum("observations"), "observation")}, ${plural(sum("summaries"), "summary", "summaries")}`
      + ` and ${plural(sum("prompts"), "prompt")} from ${plural(sum("sessions"), "session")} in ${plural(items.length, "project")}.`
    : "Nothing stored yet.";
}

// Team memory (`/api/team`): its state in one line, and an author filter once teammates' rows are here.
export async function refreshTeam() {
  const team = await api("/api/team");
  const line = $("team");
  line.hidden = !team.enabled;
  if (team.enabled) {
    line.textContent = team.problem ? `Team memory: ${team.problem}`
      : team.error ? `Team memory: not connected: ${team.error}`
        : `Team memory: ${team.connected ? "connected to" : "connecting to"} ${team.server}; ${team.outbox} waiting to be shared.`;
    line.classList.toggle("warn-text", Boolean(team.problem || team.error));
  }
  const authors = (team.authors || []).map((entry) => entry.author);
  if (filters.author && !authors.includes(filters.author)) authors.push(filters.author);
  const select = $("author");
  select.replaceChildren(Object.assign(render.el("option", "", "Everyone"), { value: "" }),
    ...authors.map((name) => Object.assign(render.el("option", "", `by ${name}`), { value: name })));
  select.value = filters.author;
  select.hidden = authors.length === 0;
}

export const refreshProjects = coalesce(() => {
  refreshProjectsNow().catch(() => {});
  refreshTeam().catch(() => {});
}, 300);

export function setConnected(connected) {
  $("banner").hidden = connected;
  if (!connected) {
    const badge = $("health");
    badge.classList.remove("ok", "warn");
    badge.classList.add("down");
    badge.querySelector(".badge-text").textContent = "disconnected";
  }
}

export function install() {
  $("retry-all").addEventListener("click", (event) => retry("all", event.target));
}
