// The theme picker: light, dark or the system's, remembered in localStorage. theme.js (loaded
// before the stylesheet) applies the choice on every load; this module changes it.
import { $ } from "./api.js";

const KEY = "claude-mem-theme";

export function install() {
  const select = $("theme");
  select.value = document.documentElement.dataset.themeChoice || "system";
  select.addEventListener("change", () => {
    try {
      if (select.value === "system") window.localStorage.removeItem(KEY);
      else window.localStorage.setItem(KEY, select.value);
    } catch (error) {
      // Storage refused: the choice holds for this page only.
      document.documentElement.dataset.theme = select.value === "dark" ? "dark" : "light";
      return;
    }
    document.dispatchEvent(new Event("claude-mem-theme"));
  });
  window.addEventListener("storage", (event) => {
    if (event.key === KEY) select.value = event.newValue || "system";
  });
}
