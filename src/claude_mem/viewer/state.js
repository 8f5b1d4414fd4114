// What the page shows, as the address bar says it: the view and its filters (see url.js).
import { basename } from "./render.js";

export const VIEWS = ["feed", "sessions", "session", "stats", "settings"];

export const filters = { view: "feed", project: "", type: "", author: "", mode: "", q: "", session: "" };

// Type and author (team memory: a teammate's rows) describe observations: with either, only observations show.
export function observationsOnly() {
  return Boolean(filters.type || filters.author);
}

// Project key → display name, from /api/projects.
export const names = new Map();

export function projectName(key) {
  return names.get(key) || basename(key);
}
