// Keyboard: "/" focuses search, Esc clears it (a dialog closes itself), j/k move a visible selection
// through the items of the view, Enter opens the selected one, "?" shows the keys.
import { $ } from "./api.js";

const TYPING = "input, textarea, select, [contenteditable]";

function items() {
  const view = document.querySelector("main > .view:not([hidden])");
  return view ? [...view.querySelectorAll("[data-select]")].filter((item) => item.offsetParent !== null) : [];
}

function move(step) {
  const all = items();
  if (!all.length) return;
  const current = all.findIndex((item) => item.classList.contains("selected"));
  const next = all[current < 0 ? (step > 0 ? 0 : all.length - 1) : Math.min(all.length - 1, Math.max(0, current + step))];
  all.forEach((item) => item.classList.remove("selected"));
  next.classList.add("selected");
  const control = next.querySelector("[data-open]") || next;
  control.focus({ preventScroll: true });
  next.scrollIntoView({ block: "nearest" });
}

function openSelected() {
  const selected = items().find((item) => item.classList.contains("selected"));
  selected?.querySelector("[data-open]")?.click();
}

// onClear(): Esc in the search box with a query.
export function install(onClear) {
  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    if (document.querySelector("dialog[open]")) return;  // a modal dialog handles its own keys (Esc closes it)
    const target = event.target;
    if (target.closest && target.closest(TYPING)) {
      if (event.key === "Escape" && target.id === "search") {
        event.preventDefault();
        if (target.value) onClear();
        else target.blur();
      }
      return;
    }
    if (event.key === "/") {
      event.preventDefault();
      $("search").focus();
      $("search").select();
    } else if (event.key === "j" || event.key === "k") {
      event.preventDefault();
      document.body.classList.add("keyboard");
      move(event.key === "j" ? 1 : -1);
    } else if (event.key === "Enter" && !target.closest("button, a, summary")) {
      openSelected();
    } else if (event.key === "?") {
      $("keys-dialog").showModal();
    } else if (event.key === "Escape" && $("search").value) {
      onClear();
    }
  });
  // The selection is outlined while the keyboard drives; a click moves it quietly, so j/k go on from there.
  document.addEventListener("pointerdown", () => document.body.classList.remove("keyboard"));
  document.querySelector("main").addEventListener("focusin", (event) => {
    const item = event.target.closest("[data-select]");
    if (!item) return;
    document.querySelectorAll("[data-select].selected").forEach((other) => other !== item && other.classList.remove("selected"));
    item.classList.add("selected");
  });
  $("help").addEventListener("click", () => $("keys-dialog").showModal());
  $("keys-close").addEventListener("click", () => $("keys-dialog").close());
}
