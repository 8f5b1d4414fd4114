// The worker's HTTP API and the page's small shared helpers.

export const $ = (id) => document.getElementById(id);

export class ApiError extends Error {
  constructor(message, status) {
    super(message);
    this.status = status;
  }
}

export async function api(path, options = {}) {
  const headers = { accept: "application/json" };
  if (options.body) headers["content-type"] = "application/json";
  const response = await fetch(path, { ...options, headers });
  const body = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(body?.error?.message || `${response.status} ${response.statusText}`, response.status);
  return body;
}

export function query(params) {
  const wanted = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== "" && value !== null && value !== undefined) wanted.set(key, value);
  }
  return wanted.toString();
}

export function notice(message) {
  const node = $("notice");
  node.textContent = message;
  node.hidden = false;
  clearTimeout(notice.timer);
  notice.timer = setTimeout(() => { node.hidden = true; }, 8000);
}

// At most one call per `ms`, and always one after the last request: a burst of rows (an import)
// refreshes a few times as it goes, never waits for the burst to end.
export function coalesce(fn, ms) {
  let timer = null;
  return (...args) => {
    if (timer === null) timer = setTimeout(() => { timer = null; fn(...args); }, ms);
  };
}

export function debounce(fn, ms) {
  let timer;
  return (...args) => { clearTimeout(timer); timer = setTimeout(() => fn(...args), ms); };
}

export function plural(n, word, many = `${word}s`) {
  return `${Number(n).toLocaleString("en")} ${n === 1 ? word : many}`;
}
