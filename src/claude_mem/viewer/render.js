// DOM builders for the viewer. Stored memory is untrusted text (a title may hold markup meant to
// run): every piece of it goes in through textContent, never innerHTML, so it can only be read.

export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null && text !== "") node.textContent = String(text);
  return node;
}

export function button(className, text) {
  const node = el("button", className, text);
  node.type = "button";
  return node;
}

// An in-page link (app.js turns its click into a view change; a middle click opens a new tab).
export function viewLink(className, text, params) {
  const node = el("a", className, text);
  node.href = `?${new URLSearchParams(params)}`;
  node.dataset.internal = "";
  return node;
}

export function sessionLink(contentSessionId, text = "Whole session") {
  return viewLink("link session-link", text, { view: "session", session: contentSessionId });
}

export function basename(path) {
  const parts = String(path || "").split(/[\\/]/).filter(Boolean);
  return parts.length ? parts[parts.length - 1] : String(path || "");
}

export function relativeTime(iso) {
  const seconds = (Date.now() - Date.parse(iso)) / 1000;
  if (!Number.isFinite(seconds)) return "";
  if (seconds < 45) return "just now";
  const steps = [[60, "min"], [24, "h"], [7, "d"]];
  let value = seconds / 60;
  for (const [size, unit] of steps) {
    if (value < size) return `${Math.round(value)} ${unit} ago`;
    value /= size;
  }
  return new Date(iso).toLocaleDateString();
}

export function timeEl(iso) {
  const node = el("time", "when", relativeTime(iso));
  node.dateTime = iso || "";
  if (iso) node.title = new Date(iso).toLocaleString();
  return node;
}

export function refreshTimes(root) {
  for (const node of root.querySelectorAll("time.when")) node.textContent = relativeTime(node.dateTime);
}

export function badge(kind, type) {
  const label = kind === "observation" ? type : kind;
  return el("span", `tag tag-${String(label).replace(/[^a-z]/g, "")}`, label);
}

// A memory whose files changed or were deleted since it was made (recall.freshness): a small badge naming them.
export function staleBadge(item) {
  if (item.freshness !== "changed" && item.freshness !== "deleted") return null;
  const files = (item.changed_files || []).join(", ");
  const node = el("span", `stale stale-${item.freshness}`, item.freshness);
  node.title = files ? `${item.freshness} since: ${files}` : `files ${item.freshness} since`;
  return node;
}

function meta(item, projectName) {
  const line = el("div", "meta");
  line.append(timeEl(item.created_at), el("span", "project", projectName(item.project)));
  if (item.author) line.append(el("span", "author", `by ${item.author}`));
  const stale = staleBadge(item);
  if (stale) line.append(stale);
  if (item.superseded_by) line.append(el("span", "superseded", `superseded by #${item.superseded_by}`));
  line.append(el("span", "ref", item.ref || (item.kind === "observation" ? `#${item.id}` : "")));
  return line;
}

export function headline(item) {
  if (item.title) return item.title;
  if (item.kind === "summary") return item.request || "Session summary";
  if (item.kind === "prompt") return item.text;
  return "(untitled)";
}

export function fields(pairs) {
  const list = el("dl", "fields");
  for (const [label, value] of pairs) {
    if (!value || (Array.isArray(value) && !value.length)) continue;
    list.append(el("dt", "", label));
    const dd = el("dd");
    if (Array.isArray(value)) {
      const items = el("ul", label.startsWith("Files") ? "files" : "");
      for (const entry of value) items.append(el("li", "", entry));
      dd.append(items);
    } else {
      dd.textContent = String(value);
    }
    list.append(dd);
  }
  return list;
}

// Text with FTS5 match markers ("…the [budget] calculation…"), the matched words highlighted.
function snippet(text) {
  const node = el("p", "snippet");
  String(text || "").split(/\[([^\]]*)\]/).forEach((part, index) => {
    node.append(index % 2 ? el("mark", "", part) : document.createTextNode(part));
  });
  return node;
}

// A Claude Code auto memory note found by search (issue 30): where its full text is.
export function noteDetails(ref) {
  return el("p", "small", `${ref}: a note of Claude Code's own auto memory, indexed read-only. Its file in the`
    + " project's memory directory holds the full text (`claude-mem show " + ref + "` prints it).");
}

// One feed entry or search result; `item.snippet` marks a search result.
export function card(item, projectName) {
  const li = el("li", `card kind-${item.kind}`);
  li.dataset.key = `${item.kind}:${item.id}`;
  if (item.kind === "auto-memory") li.dataset.ref = item.ref;
  li.dataset.created = item.created_at || "";
  li.dataset.project = item.project || "";
  li.dataset.select = "";
  const head = button("card-head");
  head.dataset.open = "";
  head.setAttribute("aria-expanded", "false");
  head.append(badge(item.kind, item.type), el("span", "title", headline(item)));
  li.append(head);
  if (item.subtitle) li.append(el("p", "subtitle", item.subtitle));
  if (item.snippet) li.append(snippet(item.snippet));
  else if (item.kind === "summary") {
    li.append(fields([["Learned", item.learned], ["Completed", item.completed], ["Next steps", item.next_steps]]));
  }
  li.append(meta(item, projectName));
  const details = el("div", "details");
  details.hidden = true;
  li.append(details);
  return li;
}

// Issue 26: "Superseded by #N" / "Supersedes #M", each id a button that opens that observation below.
export function chain(row) {
  const box = el("p", "chain small");
  const links = (label, ids) => {
    if (!ids.length) return;
    box.append(el("span", "", `${label} `));
    for (const id of ids) {
      const link = button("link chain-link", `#${id}`);
      link.dataset.chain = String(id);
      box.append(link, document.createTextNode(" "));
    }
  };
  links("Superseded by", row.superseded_by ? [row.superseded_by] : []);
  links("Supersedes", Array.isArray(row.supersedes) ? row.supersedes : []);
  return box.childNodes.length ? box : null;
}

// The full record; `brief` leaves out what a feed card of a summary already shows.
export function details(row, brief = false) {
  const box = el("div", "details-body");
  if (row.kind === "observation") {
    const links = chain(row);
    if (links) box.append(links);
    if (row.narrative) box.append(el("p", "narrative", row.narrative));
    box.append(fields([["Facts", row.facts], ["Concepts", row.concepts], ["Files read", row.files_read],
      ["Files modified", row.files_modified]]));
  } else if (row.kind === "summary") {
    const shown = brief ? [] : [["Request", row.request], ["Learned", row.learned], ["Completed", row.completed],
      ["Next steps", row.next_steps]];
    box.append(fields([...shown, ["Investigated", row.investigated], ["Notes", row.notes],
      ["Files read", row.files_read], ["Files edited", row.files_edited]]));
  } else {
    box.append(el("p", "narrative", row.text));
  }
  const facts = [`session ${row.content_session_id || row.session_id || "—"}`];
  if (row.prompt_number) facts.push(`prompt ${row.prompt_number}`);
  if (row.input_tokens || row.output_tokens) facts.push(`${row.input_tokens} in / ${row.output_tokens} out tokens`);
  box.append(el("p", "muted small", facts.join(" · ")));
  return box;
}

export function timeline(result) {
  const list = el("ol", "timeline");
  for (const item of result.items) {
    const li = el("li", item.anchor ? "anchor" : "");
    li.append(timeEl(item.created_at), badge(item.kind, item.type), el("span", "title", headline(item)));
    list.append(li);
  }
  if (!result.items.length) list.append(el("li", "muted", "Nothing around it."));
  return list;
}

export function counts(queue) {
  const box = el("div", "counts");
  for (const name of ["pending", "claimed", "done", "failed"]) {
    const value = queue ? queue[name] ?? 0 : "–";
    const cell = el("div", `count count-${name}${name === "failed" && value > 0 ? " alert" : ""}`);
    cell.append(el("strong", "", String(value)), el("span", "", name));
    box.append(cell);
  }
  return box;
}

export function failedEvent(event, projectName, onRetry) {
  const li = el("li", "failed-event");
  li.dataset.id = String(event.id);
  const head = el("div", "failed-head");
  const what = event.tool ? `${event.kind} · ${event.tool}` : event.kind;
  // why it failed (m021): a transient failure comes back by itself; one in the events' content stays
  const why = event.failure_class === "transient" ? " · transient: retried by itself"
    : event.failure_class === "content" ? " · content: stays failed" : "";
  head.append(el("strong", "", what), el("span", "muted", `${event.attempts} attempts${why}`));
  const retry = button("retry", "Retry");
  retry.addEventListener("click", () => onRetry(event.id, retry));
  head.append(retry);
  li.append(head, el("pre", "error", event.last_error || "(no error recorded)"));
  const line = el("div", "meta");
  line.append(timeEl(event.created_at), el("span", "project", projectName(event.project)));
  li.append(line);
  return li;
}
