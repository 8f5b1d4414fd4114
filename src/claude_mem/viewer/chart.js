// Small SVG charts drawn with DOM calls: stacked bars over days and a comparison of two amounts.
// Colours come from CSS classes (`series-<name>`), so both themes apply; each bar carries a <title>
// (its tooltip and accessible name) and every chart a <title> and <desc> for screen readers.
const NS = "http://www.w3.org/2000/svg";
let ids = 0;

function svg(tag, attrs = {}, text) {
  const node = document.createElementNS(NS, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = String(text);
  return node;
}

export function compact(n) {
  const value = Number(n) || 0;
  if (Math.abs(value) >= 1e6) return `${(value / 1e6).toFixed(value >= 1e7 ? 0 : 1)}M`;
  if (Math.abs(value) >= 1e4) return `${Math.round(value / 1e3)}k`;
  if (Math.abs(value) >= 1e3) return `${(value / 1e3).toFixed(1)}k`;
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}

// A round top for the axis: 1, 2 or 5 times a power of ten, at least `max`.
function niceMax(max) {
  if (max <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  return [1, 1.5, 2, 3, 4, 5, 6, 8, 10].map((step) => step * power).find((top) => top >= max);
}

function labelled(root, title, description) {
  const titleId = `chart-title-${++ids}`;
  const descId = `chart-desc-${ids}`;
  root.setAttribute("role", "img");
  root.setAttribute("aria-labelledby", `${titleId} ${descId}`);
  root.append(svg("title", { id: titleId }, title), svg("desc", { id: descId }, description));
}

// days: ["YYYY-MM-DD"…]; series: [{name, label, values: [per day]}], stacked in order from the bottom.
export function stackedBars({ days, series, title, description, width, height = 190, unit = "" }) {
  const pad = { top: 10, right: 8, bottom: 22, left: 40 };
  const root = svg("svg", { width, height, viewBox: `0 0 ${width} ${height}`, class: "chart" });
  labelled(root, title, description);
  const totals = days.map((_, i) => series.reduce((sum, s) => sum + (s.values[i] || 0), 0));
  const top = niceMax(Math.max(0, ...totals));
  const plotW = width - pad.left - pad.right;
  const plotH = height - pad.top - pad.bottom;
  const y = (value) => pad.top + plotH - (value / top) * plotH;
  const axis = svg("g", { class: "axis", "aria-hidden": "true" });
  for (const tick of [0, top / 2, top]) {
    axis.append(svg("line", { x1: pad.left, x2: width - pad.right, y1: y(tick), y2: y(tick), class: "grid" }),
      svg("text", { x: pad.left - 6, y: y(tick) + 4, "text-anchor": "end" }, compact(tick)));
  }
  const slot = plotW / Math.max(days.length, 1);
  const barW = Math.max(1, Math.min(28, slot * 0.72));
  const tickDays = new Set([0, Math.floor((days.length - 1) / 2), days.length - 1]);
  days.forEach((day, i) => {
    if (!tickDays.has(i)) return;
    // The first and last labels keep inside the chart: anchored at their outer edge.
    const anchor = i === 0 ? "start" : i === days.length - 1 ? "end" : "middle";
    const x = anchor === "start" ? pad.left + slot * i : anchor === "end" ? pad.left + slot * (i + 1) : pad.left + slot * i + slot / 2;
    axis.append(svg("text", { x, y: height - 6, "text-anchor": anchor }, day.slice(5)));
  });
  root.append(axis);
  const bars = svg("g", { class: "bars" });
  days.forEach((day, i) => {
    let base = 0;
    const x = pad.left + slot * i + (slot - barW) / 2;
    for (const s of series) {
      const value = s.values[i] || 0;
      if (!value) continue;
      const rect = svg("rect", { x: x.toFixed(1), y: y(base + value).toFixed(1), width: barW.toFixed(1),
        height: Math.max(0.5, y(base) - y(base + value)).toFixed(1), class: `series-${s.name}` });
      rect.append(svg("title", {}, `${day} · ${s.label}: ${value.toLocaleString("en")}${unit}`));
      bars.append(rect);
      base += value;
    }
  });
  root.append(bars);
  return root;
}

// Two amounts side by side as horizontal bars: [{name, label, value}], the longer one full width.
export function comparison({ items, title, description, width, unit = "" }) {
  const rowH = 34;
  const height = items.length * rowH + 4;
  const root = svg("svg", { width, height, viewBox: `0 0 ${width} ${height}`, class: "chart" });
  labelled(root, title, description);
  const max = Math.max(1, ...items.map((item) => item.value));
  items.forEach((item, i) => {
    const y = i * rowH + 2;
    const barW = Math.max(2, (item.value / max) * (width - 2));
    const rect = svg("rect", { x: 0, y: y + 16, width: barW.toFixed(1), height: 14, rx: 3, class: `series-${item.name}` });
    rect.append(svg("title", {}, `${item.label}: ${item.value.toLocaleString("en")}${unit}`));
    root.append(svg("text", { x: 0, y: y + 12, class: "bar-label" }, `${item.label} · ${compact(item.value)}${unit}`), rect);
  });
  return root;
}

// An HTML legend for a chart's series (swatches take the same `series-<name>` colours).
export function legend(series) {
  const list = document.createElement("ul");
  list.className = "legend";
  for (const s of series) {
    const li = document.createElement("li");
    const swatch = document.createElementNS(NS, "svg");
    swatch.setAttribute("width", "10");
    swatch.setAttribute("height", "10");
    swatch.setAttribute("aria-hidden", "true");
    swatch.append(svg("rect", { width: 10, height: 10, rx: 2, class: `series-${s.name}` }));
    li.append(swatch, document.createTextNode(` ${s.label}`));
    list.append(li);
  }
  return list;
}
