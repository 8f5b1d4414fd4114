// Recurring failures (issue 31) in the stats view: per project and normalized command (or error), how often
// and when they were seen, and the fix that resolved them — the observations made between the last failure
// and the success (`#id title`) — or "not resolved". The same facts the hooks add beside a failure that recurs.
import { plural } from "./api.js";
import * as render from "./render.js";

const when = (at) => String(at || "–").slice(0, 16).replace("T", " ");

function fixLine(item) {
  const line = render.el("p", "failure-fix small");
  if (item.resolved_by === null || item.resolved_by === undefined) {
    line.append(render.el("strong", "", "Not resolved"), " — no later success of the same command.");
    return line;
  }
  line.append(render.el("strong", "", item.resolved ? "Fixed " : "Fixed once "), when(item.resolved_at));
  for (const obs of item.fix_observations || []) {
    line.append(" · ", render.el("span", "failure-obs", `#${obs.id} ${obs.title}`));
    if (obs.files_modified && obs.files_modified.length) line.append(` — ${obs.files_modified.slice(0, 2).join(", ")}`);
  }
  if (item.fix) line.append(render.el("span", "muted", ` (${item.fix})`));
  if (!item.resolved) line.append(render.el("span", "failure-open", ` — failed again since (${item.open} open)`));
  return line;
}

export function panel(items) {
  const box = render.el("section", "panel failures");
  box.id = "failures";
  box.append(render.el("h2", "", "Recurring failures"));
  if (!items || !items.length) {
    box.append(render.el("p", "muted", "No command has failed the same way twice."));
    return box;
  }
  const list = render.el("ol", "failure-list");
  for (const item of items) {
    const row = render.el("li", "failure");
    const head = render.el("p", "failure-head");
    head.append(render.el("strong", "", item.program || "?"), ` · ${plural(item.count, "time")} · last ${when(item.last_seen)}`
      + ` · first ${when(item.first_seen)} · ${item.project_name}`);
    row.append(head, render.el("code", "failure-command", item.command || "–"),
      render.el("p", "failure-error small muted", item.error || ""), fixLine(item));
    list.append(row);
  }
  box.append(list);
  return box;
}
