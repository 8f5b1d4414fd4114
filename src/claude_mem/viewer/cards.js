// A card opens in place: the full record, "Timeline around it", its session, and Forget for an observation.
import { api, notice } from "./api.js";
import * as render from "./render.js";

async function toggle(card, onForget) {
  const head = card.querySelector(".card-head");
  const box = card.querySelector(".details");
  const open = head.getAttribute("aria-expanded") !== "true";
  head.setAttribute("aria-expanded", String(open));
  box.hidden = !open;
  if (!open || box.dataset.loaded) return;
  box.dataset.loaded = "1";
  const [kind, id] = card.dataset.key.split(":");
  if (kind === "auto-memory") { // Claude Code's own note: indexed read-only here, its file is the full text
    box.replaceChildren(render.noteDetails(card.dataset.ref));
    return;
  }
  const ref = { observation: id, summary: `S${id}`, prompt: `P${id}` }[kind];
  try {
    const row = kind === "observation" ? await api(`/api/observations/${id}`)
      : (await api("/api/observations/batch", { method: "POST", body: JSON.stringify({ ids: [ref] }) })).items[0];
    const actions = render.el("div", "actions");
    const link = render.button("link timeline-link", "Timeline around it");
    link.addEventListener("click", () => showTimeline(actions, ref, link));
    actions.append(link);
    if (row.content_session_id && !card.closest("#story")) actions.append(render.sessionLink(row.content_session_id));
    if (kind === "observation") {
      const forget = render.button("link danger-link forget-observation", "Forget…");
      forget.addEventListener("click", () => onForget({ observation: id }, card.querySelector(".card-head .title").textContent));
      actions.append(forget);
    }
    box.replaceChildren(render.details(row, !!card.querySelector(":scope > .fields")), actions);
    for (const link of box.querySelectorAll(".chain-link")) link.addEventListener("click", () => showLinked(link));
  } catch (error) {
    delete box.dataset.loaded;
    box.replaceChildren(render.el("p", "error", `Could not load it: ${error.message}`));
  }
}

// A superseding or superseded observation (issue 26), its title and narrative shown after the chain.
async function showLinked(link) {
  link.disabled = true;
  try {
    const row = await api(`/api/observations/${link.dataset.chain}`);
    const shown = render.el("div", "linked");
    shown.append(render.badge("observation", row.type), render.el("strong", "title", render.headline(row)),
      render.el("p", "narrative", row.narrative));
    link.closest(".chain").after(shown);
  } catch (error) {
    link.disabled = false;
    notice(`Could not load #${link.dataset.chain}: ${error.message}`);
  }
}

async function showTimeline(actions, ref, link) {
  link.disabled = true;
  try {
    const result = await api(`/api/timeline?${new URLSearchParams({ anchor: ref, before: 5, after: 5 })}`);
    link.remove();
    actions.after(render.timeline(result));
  } catch (error) {
    link.disabled = false;
    notice(`Could not load the timeline: ${error.message}`);
  }
}

// Cards in `list` open and close on a click of their head; `onForget({observation}, title)` asks to forget one.
export function expandable(list, onForget) {
  list.addEventListener("click", (event) => {
    const head = event.target.closest(".card-head");
    if (head) toggle(head.closest(".card"), onForget);
  });
}

// Removes the cards of forgotten rows from `list`; returns how many went.
export function removeForgotten(list, removed) {
  const keys = new Set([...(removed.observations || []).map((id) => `observation:${id}`),
    ...(removed.summaries || []).map((id) => `summary:${id}`), ...(removed.prompts || []).map((id) => `prompt:${id}`)]);
  const gone = [...list.querySelectorAll(".card")].filter((card) => keys.has(card.dataset.key)
    || (removed.project && card.dataset.project === removed.project));
  gone.forEach((card) => card.remove());
  return gone.map((card) => card.dataset.key);
}
