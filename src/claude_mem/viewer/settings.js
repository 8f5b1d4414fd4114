// The settings panel, generated from the worker's settings registry: each setting's value, where it
// comes from and what it does, an input for its kind, and the server's reason when a value is refused.
// Secrets are write-only: the page never holds their value, only whether one is set.
import { $, ApiError, api, notice } from "./api.js";
import * as render from "./render.js";

const SOURCES = { default: "default", file: "settings.json", environment: "environment" };
const APPLIES = { next_session: ["next session", "applies from the next Claude Code session"],
  restart: ["needs restart", "the worker applies it after a restart"] };
let loaded = false;

function shown(item, value) {
  if (value === null || value === undefined || value === "") return item.optional ? "unset" : "(empty)";
  if (item.kind === "bool") return value ? "on" : "off";
  if (Array.isArray(value)) return value.length ? value.join(", ") : "(none)";
  return String(value);
}

function control(item, id) {
  let input;
  if (item.secret) {
    input = render.el("input");
    input.type = "password";
    input.autocomplete = "new-password";
    input.placeholder = item.is_set ? "set · type a new one to replace it" : "not set · type one to set it";
  } else if (item.kind === "bool") {
    input = render.el("input");
    input.type = "checkbox";
    input.checked = !!item.value;
  } else if (item.kind === "choice") {
    input = render.el("select");
    const choices = [...(item.optional ? [""] : []), ...(item.choices || [])];
    input.append(...choices.map((choice) => Object.assign(render.el("option", "", choice || "unset"), { value: choice })));
    input.value = item.value ?? "";
  } else if (item.kind === "list") {
    input = render.el("textarea");
    input.rows = Math.min(6, Math.max(2, (item.value || []).length + 1));
    input.value = (item.value || []).join("\n");
    input.placeholder = "one per line";
  } else {
    input = render.el("input");
    input.value = item.value ?? "";
    if (item.kind === "int" || item.kind === "float") {
      input.type = "number";
      input.step = item.kind === "int" ? "1" : "any";
      if (item.minimum !== null && item.minimum !== undefined) input.min = String(item.minimum);
      if (item.maximum !== null && item.maximum !== undefined) input.max = String(item.maximum);
      if (item.optional) input.placeholder = "unset";
    } else {
      input.type = "text";
      input.spellcheck = false;
    }
  }
  input.id = id;
  input.className = "setting-input";
  return input;
}

// What the input holds, as the JSON value PUT /api/settings expects.
function valueOf(item, input) {
  if (item.kind === "bool" && !item.secret) return input.checked;
  if (item.kind === "list") return input.value.split("\n").map((line) => line.trim()).filter(Boolean);
  const text = input.value.trim();
  if ((item.kind === "int" || item.kind === "float") && !item.secret) {
    if (text === "") return item.optional ? null : input.value;
    return Number.isFinite(Number(text)) ? Number(text) : text;
  }
  if (item.kind === "choice" && text === "" && item.optional) return null;
  return input.value;
}

async function save(item, input, row, button) {
  const error = row.querySelector(".setting-error");
  const status = row.querySelector(".setting-status");
  button.disabled = true;
  error.hidden = true;
  try {
    const registry = await api("/api/settings", { method: "PUT", body: JSON.stringify({ [item.key]: valueOf(item, input) }) });
    if (item.secret) input.value = "";
    if (registry && Array.isArray(registry.items)) draw(registry);
    else await load();
    const saved = $("settings").querySelector(`.setting[data-key="${CSS.escape(item.key)}"] .setting-status`);
    if (saved) saved.textContent = "saved";
  } catch (failure) {
    // Refused (422 a bad value, 409 set in the environment): nothing was written; the reason is the
    // server's, and the input keeps what was tried.
    const refused = failure instanceof ApiError && failure.status >= 400 && failure.status < 500;
    error.textContent = refused ? `Not saved: ${failure.message}` : `Could not save: ${failure.message}`;
    error.hidden = false;
    status.textContent = "";
    button.disabled = false;
  }
}

function settingRow(item) {
  const row = render.el("div", `setting kind-${item.kind}${item.editable ? "" : " readonly"}`);
  row.dataset.key = item.key;
  const id = `setting-${item.key}`;
  const head = render.el("div", "setting-head");
  const name = render.el("label", "setting-key");
  name.append(render.el("code", "", item.key));
  name.htmlFor = id;
  head.append(name, render.el("span", `source source-${item.source}`, SOURCES[item.source] || item.source));
  if (APPLIES[item.applies]) {
    const [label, explained] = APPLIES[item.applies];
    head.append(Object.assign(render.el("span", "applies", label), { title: explained }));
  }
  row.append(head, render.el("p", "description", item.description));
  const line = render.el("div", "setting-control");
  if (item.editable) {
    const input = control(item, id);
    const button = render.button("save", "Save");
    button.disabled = true;
    const dirty = () => { button.disabled = false; row.querySelector(".setting-status").textContent = ""; };
    input.addEventListener("input", dirty);
    input.addEventListener("change", dirty);
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && input.tagName === "INPUT") save(item, input, row, button);
    });
    button.addEventListener("click", () => save(item, input, row, button));
    line.append(input, button);
  } else {
    const value = render.el("output", "setting-value", item.secret ? "" : shown(item, item.value));
    value.id = id;
    line.append(value);
  }
  if (item.secret) line.append(render.el("span", `secret-state ${item.is_set ? "is-set" : "not-set"}`, item.is_set ? "set" : "not set"));
  else if (item.source !== "default") line.append(render.el("span", "muted small default", `default: ${shown(item, item.default)}`));
  if (item.rule && item.editable) line.append(render.el("span", "muted small rule", item.rule));
  line.append(render.el("span", "setting-status muted small"));
  row.append(line);
  if (!item.editable && item.reason) row.append(render.el("p", "reason", item.reason));
  const error = render.el("p", "setting-error error");
  error.setAttribute("role", "alert");
  error.hidden = true;
  row.append(error);
  return row;
}

function showRestart(keys) {
  const box = $("restart-needed");
  box.hidden = !keys.length;
  $("restart-text").textContent = `The worker runs with the old value of ${keys.join(", ")} until it restarts.`;
  $("restart").disabled = false;
}

function draw(registry) {
  $("settings").replaceChildren(...registry.items.map(settingRow));
  showRestart(registry.restart_needed || []);
  const problems = registry.warnings || [];
  $("settings-problems").replaceChildren(...problems.map((text) => render.el("li", "", text)));
  $("settings-problems").hidden = !problems.length;
  loaded = true;
}

export async function load() {
  draw(await api("/api/settings/registry"));
}

export function show() {
  if (!loaded) load().catch((error) => notice(`Could not read the settings: ${error.message}`));
}

// The worker came back (after a restart, or a lost connection): what needs a restart may have changed.
export function reconnected() {
  if (loaded) load().catch(() => {});
}

async function restart() {
  const button = $("restart");
  button.disabled = true;
  try {
    await api("/api/worker/restart", { method: "POST" });
    $("restart-text").textContent = "Restarting the worker…";
  } catch (error) {
    button.disabled = false;
    notice(`Could not restart the worker: ${error.message}`);
  }
}

export function install() {
  $("restart").addEventListener("click", restart);
}
