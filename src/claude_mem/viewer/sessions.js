// The sessions view (a project's Claude Code sessions, latest first) and a session page that tells
// one session as a story: each prompt, what the observer made of the work, and the summaries.
import { $, api, notice, plural, query } from "./api.js";
import * as cards from "./cards.js";
import * as render from "./render.js";
import { filters, projectName } from "./state.js";

const PAGE = 30;
const list = { offset: 0, total: 0, loadedFor: null, generation: 0 };
const page = { session: null, loadedFor: null };
let forgetHandler = () => {};

function when(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? "" : date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

function counts(session) {
  const parts = [plural(session.prompts || 0, "prompt"), plural(session.observations || 0, "observation"),
    plural(session.summaries || 0, "summary", "summaries")];
  if (session.failed_events) parts.push(plural(session.failed_events, "failed event"));
  return parts.join(" · ");
}

function title(session) {
  return session.title || `Session ${String(session.content_session_id).slice(0, 8)}`;
}

function statusTag(session) {
  return render.el("span", `status status-${String(session.status || "").replace(/[^a-z]/g, "")}`, session.status || "?");
}

function row(session) {
  const li = render.el("li", "session-row");
  li.dataset.session = session.content_session_id;
  li.dataset.project = session.project || "";
  li.dataset.select = "";
  const head = render.el("div", "session-head");
  const link = render.sessionLink(session.content_session_id, title(session));
  link.className = "session-title";
  link.dataset.open = "";
  const forget = render.button("link danger-link forget-session", "Forget…");
  forget.setAttribute("aria-label", `Forget session ${title(session)}`);
  forget.addEventListener("click", () => forgetHandler({ session: session.content_session_id }, title(session)));
  head.append(link, statusTag(session), forget);
  const meta = render.el("div", "meta");
  meta.append(render.el("span", "", when(session.started_at)), render.el("span", "project", projectName(session.project)));
  if (session.author) meta.append(render.el("span", "author", `by ${session.author}`));
  meta.append(render.el("span", "session-counts", counts(session)));
  li.append(head, meta);
  return li;
}

async function loadList(generation) {
  const button = $("sessions-more");
  button.disabled = true;
  try {
    const found = await api(`/api/sessions?${query({ project: filters.project, limit: PAGE, offset: list.offset })}`);
    if (generation !== list.generation) return;
    list.offset += found.items.length;
    list.total = found.total;
    $("sessions").append(...found.items.map(row));
    button.hidden = list.offset >= found.total || !found.items.length;
    finishList();
  } catch (error) {
    notice(`Could not list the sessions: ${error.message}`);
  } finally {
    button.disabled = false;
  }
}

function finishList() {
  const shown = $("sessions").children.length;
  $("sessions-empty").hidden = shown > 0;
  $("sessions-empty").textContent = filters.project ? "No sessions stored for this project." : "No sessions stored yet.";
  $("sessions-count").textContent = list.total ? plural(list.total, "session") : "";
  $("forget-project").hidden = !filters.project;
  $("sessions-title").textContent = filters.project ? `Sessions in ${projectName(filters.project)}` : "Sessions";
}

export function showList() {
  if (list.loadedFor === filters.project) return finishList();
  list.loadedFor = filters.project;
  list.generation += 1;
  list.offset = 0;
  list.total = 0;
  $("sessions").replaceChildren();
  $("sessions-more").hidden = true;
  finishList();
  return loadList(list.generation);
}

function storyItem(item) {
  const card = render.card(item, projectName);
  if (item.kind === "prompt") card.querySelector(".card-head .tag").textContent = `prompt ${item.prompt_number || ""}`.trim();
  return card;
}

export async function showSession() {
  const id = filters.session;
  if (page.loadedFor === id) return;
  page.loadedFor = id;
  page.session = null;
  $("story").replaceChildren();
  $("session-title").textContent = "Session";
  $("session-facts").textContent = "";
  $("session-gone").hidden = true;
  $("forget-session").hidden = true;
  $("story-truncated").hidden = true;
  try {
    const found = await api(`/api/sessions/${encodeURIComponent(id)}`);
    if (page.loadedFor !== id) return;
    page.session = found.session;
    const session = found.session;
    $("session-title").textContent = title(session);
    const facts = [projectName(session.project), when(session.started_at), session.status, counts(session)];
    if (session.author) facts.splice(1, 0, `by ${session.author}`);
    $("session-facts").textContent = facts.filter(Boolean).join(" · ");
    $("forget-session").hidden = false;
    $("story").replaceChildren(...found.items.map(storyItem));
    $("story-truncated").hidden = !found.truncated;
  } catch (error) {
    if (error.status === 404) $("session-gone").hidden = false;
    else notice(`Could not load the session: ${error.message}`);
  }
}

// Rows forgotten (here or in another viewer) leave the list and the page.
export function forgotten(removed) {
  const sessions = new Set(removed.sessions || []);
  for (const li of [...$("sessions").children]) {
    if (sessions.has(li.dataset.session) || (removed.project && li.dataset.project === removed.project)) {
      li.remove();
      list.total = Math.max(0, list.total - 1);
    }
  }
  finishList();
  cards.removeForgotten($("story"), removed);
  const current = page.session;
  if (current && (sessions.has(current.content_session_id) || removed.project === current.project)) {
    page.session = null;
    $("story").replaceChildren();
    $("forget-session").hidden = true;
    $("session-facts").textContent = "";
    $("session-gone").hidden = false;
  }
}

// Counts on the list change when memory arrives; the next visit loads it again.
export function stale() {
  list.loadedFor = null;
}

export function install(onForget) {
  forgetHandler = onForget;
  $("sessions-more").addEventListener("click", () => loadList(list.generation));
  $("forget-project").addEventListener("click", () => onForget({ project: filters.project }, projectName(filters.project)));
  $("forget-session").addEventListener("click", () => {
    if (page.session) onForget({ session: page.session.content_session_id }, title(page.session));
  });
  cards.expandable($("story"), onForget);
}
