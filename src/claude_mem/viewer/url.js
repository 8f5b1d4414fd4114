// The view and its filters live in the query string (?view=&project=&type=&author=&mode=&q=&session=), so a
// view can be bookmarked, reloaded, and walked with back/forward.
import { filters, VIEWS } from "./state.js";

const KEYS = ["view", "project", "type", "author", "mode", "q", "session"];

export function read() {
  const params = new URLSearchParams(window.location.search);
  const wanted = Object.fromEntries(KEYS.map((key) => [key, (params.get(key) || "").trim()]));
  if (!VIEWS.includes(wanted.view)) wanted.view = "feed";
  if (wanted.view !== "session") wanted.session = "";
  if (wanted.view === "session" && !wanted.session) wanted.view = "sessions";
  return wanted;
}

export function href(state) {
  const params = new URLSearchParams();
  for (const key of KEYS) {
    const value = state[key];
    if (!value || (key === "view" && value === "feed") || (key === "session" && state.view !== "session")) continue;
    params.set(key, value);
  }
  const text = params.toString();
  return text ? `?${text}` : window.location.pathname;
}

// `push` adds a history entry (a new view or filter); otherwise the current one is replaced (typing).
export function write(push) {
  const target = href(filters);
  if (target === window.location.search || (target === window.location.pathname && !window.location.search)) return;
  window.history[push ? "pushState" : "replaceState"](null, "", target);
}
