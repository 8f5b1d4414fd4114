// Applies the chosen theme before the first paint. A classic script loaded synchronously in <head>,
// ahead of the stylesheet (the CSP allows no inline script): `data-theme` on <html> is "light" or
// "dark" from the stored choice ("light", "dark" or "system", remembered in localStorage).
(function () {
  var KEY = "claude-mem-theme";
  var media = window.matchMedia("(prefers-color-scheme: dark)");

  function choice() {
    try {
      var stored = window.localStorage.getItem(KEY);
      return stored === "light" || stored === "dark" ? stored : "system";
    } catch (error) {
      return "system";  // storage refused (a privacy mode): follow the system
    }
  }

  function apply() {
    var chosen = choice();
    var root = document.documentElement;
    root.dataset.theme = chosen === "system" ? (media.matches ? "dark" : "light") : chosen;
    root.dataset.themeChoice = chosen;
    // The meta tag tells the browser which canvas to paint before the stylesheet arrives.
    var meta = document.querySelector('meta[name="color-scheme"]');
    if (meta) meta.content = root.dataset.theme;
  }

  apply();
  media.addEventListener("change", apply);
  window.addEventListener("storage", function (event) { if (event.key === KEY) apply(); });
  document.addEventListener("claude-mem-theme", apply);
})();
