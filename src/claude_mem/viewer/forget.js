// Forgetting from the viewer: the worker's preview names what would go and counts it, a dialog asks,
// and only Forget deletes. Every open viewer then drops the rows (the stream's `forget` event).
import { $, api, plural, query } from "./api.js";
import * as render from "./render.js";
import { projectName } from "./state.js";

const WORDS = {
  observations: ["observation", "observations"], sessions: ["session", "sessions"], prompts: ["prompt", "prompts"],
  summaries: ["summary", "summaries"], events: ["captured event", "captured events"],
};

function label(target) {
  if (target.observation) return ["Forget this observation?", `/api/observations/${encodeURIComponent(target.observation)}`];
  if (target.session) return ["Forget this session?", `/api/sessions/${encodeURIComponent(target.session)}`];
  return [`Forget the project ${projectName(target.project)}?`, `/api/projects/${encodeURIComponent(target.project)}`];
}

function countLines(counts) {
  return Object.entries(counts || {}).filter(([, n]) => typeof n === "number" && n > 0).map(([key, n]) => {
    const [one, many] = WORDS[key] || [key.replace(/_/g, " "), key.replace(/_/g, " ")];
    return render.el("li", "", plural(n, one, many));
  });
}

// Waits for the dialog to close; resolves true when Forget deleted the rows (`onRemoved` got them).
function ask(dialog, path, onRemoved) {
  const confirm = $("forget-confirm");
  const cancel = $("forget-cancel");
  const error = $("forget-error");
  return new Promise((resolve) => {
    const done = (result) => {
      confirm.removeEventListener("click", onConfirm);
      cancel.removeEventListener("click", onCancel);
      dialog.removeEventListener("close", onClose);
      if (dialog.open) dialog.close();
      resolve(result);
    };
    const onCancel = () => done(false);
    const onClose = () => done(false);
    const onConfirm = async () => {
      confirm.disabled = cancel.disabled = true;
      try {
        const report = await api(path, { method: "DELETE" });
        onRemoved(report.removed || {});
        done(true);
      } catch (failure) {
        error.textContent = `Nothing was forgotten: ${failure.message}`;
        error.hidden = false;
      } finally {
        confirm.disabled = cancel.disabled = false;
      }
    };
    confirm.addEventListener("click", onConfirm);
    cancel.addEventListener("click", onCancel);
    dialog.addEventListener("close", onClose);
  });
}

// target: {observation: id} | {session: content_session_id} | {project: key}; `name` is what the
// user sees it as (a title, a project name).
export async function forget(target, name, onRemoved) {
  const dialog = $("forget-dialog");
  const [heading, path] = label(target);
  const preview = await api(`/api/forget/preview?${query(target)}`);
  $("forget-title").textContent = heading;
  $("forget-what").textContent = name || "";
  $("forget-describe").textContent = preview.describe || "";
  const lines = countLines(preview.counts);
  $("forget-counts").replaceChildren(...(lines.length ? lines : [render.el("li", "muted", "nothing stored")]));
  $("forget-error").hidden = true;
  dialog.showModal();
  $("forget-cancel").focus();  // the safe choice has the focus
  return ask(dialog, path, onRemoved);
}
