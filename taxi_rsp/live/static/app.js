// The taxi-rsp map page: one script for `run --live` (states pushed by Server-Sent
// Events) and `view` (a slider over a finished run's answers). No libraries, no network.
"use strict";

// Rank colours 1..10: matplotlib's plasma scale, as in the report's maps.
const RANKS = ["#0d0887", "#3f049c", "#6600a7", "#8a09a5", "#aa2395", "#c43e7f", "#da5b69", "#ec7754",
  "#f9973f", "#feba2c"];
const NANO = 1e9;
const canvas = document.getElementById("map");
const ctx = canvas.getContext("2d");
let base = null;          // the background drawn once (density + grid), an offscreen canvas
let project = null;       // [lon, lat] -> [px, py]
let background = null;
window.taxiStates = [];   // every state shown, oldest first (for people and tests)

function $(id) { return document.getElementById(id); }

let view = null;          // the extent on screen (zoomed and panned by the user)
let unproject = null;     // [px, py] -> [lon, lat]

function projection(extent) {
  const lat0 = (extent.north + extent.south) / 2;
  const kx = Math.cos(lat0 * Math.PI / 180);  // flat earth: 1° lon = cos(lat) × 1° lat
  const w = (extent.east - extent.west) * kx, h = extent.north - extent.south;
  const pad = 30, scale = Math.min((canvas.width - 2 * pad) / w, (canvas.height - 2 * pad) / h);
  const ox = (canvas.width - w * scale) / 2, oy = (canvas.height - h * scale) / 2;
  unproject = ([px, py]) => [extent.west + (px - ox) / (kx * scale), extent.north - (py - oy) / scale];
  return ([lon, lat]) => [ox + (lon - extent.west) * kx * scale, oy + (extent.north - lat) * scale];
}

function redraw() {
  project = projection(view);
  drawBase();
  if (window.taxiState) drawState(window.taxiState); else ctx.drawImage(base, 0, 0);
}

// Wheel: zoom around the pointer; drag: pan; double click: the whole busy area again.
function zoomable() {
  canvas.addEventListener("wheel", e => {
    e.preventDefault();
    const [lon, lat] = unproject([e.offsetX, e.offsetY]), f = e.deltaY < 0 ? 0.8 : 1.25;
    view = {west: lon - (lon - view.west) * f, east: lon + (view.east - lon) * f,
            south: lat - (lat - view.south) * f, north: lat + (view.north - lat) * f};
    redraw();
  }, {passive: false});
  let from = null;
  canvas.addEventListener("mousedown", e => { from = unproject([e.offsetX, e.offsetY]); });
  window.addEventListener("mouseup", () => { from = null; });
  canvas.addEventListener("mousemove", e => {
    if (!from) return;
    const [lon, lat] = unproject([e.offsetX, e.offsetY]);
    view = {west: view.west + from[0] - lon, east: view.east + from[0] - lon,
            south: view.south + from[1] - lat, north: view.north + from[1] - lat};
    redraw();
  });
  canvas.addEventListener("dblclick", () => { view = {...background.extent}; redraw(); });
  $("fit").addEventListener("click", () => {
    const points = [];
    for (const q of Object.values((window.taxiState || {}).queries || {})) {
      for (const r of q.rows || []) {
        if (r.from) points.push(r.from, r.to);
        if (r.bounds) points.push([r.bounds[0], r.bounds[1]], [r.bounds[2], r.bounds[3]]);
      }
    }
    if (!points.length) return;
    const pad = 0.01, lons = points.map(p => p[0]), lats = points.map(p => p[1]);
    view = {west: Math.min(...lons) - pad, east: Math.max(...lons) + pad,
            south: Math.min(...lats) - pad, north: Math.max(...lats) + pad};
    redraw();
  });
}

function drawBase() {
  const off = document.createElement("canvas");
  off.width = canvas.width; off.height = canvas.height;
  const g = off.getContext("2d");
  g.fillStyle = "#fff"; g.fillRect(0, 0, off.width, off.height);
  const q2 = background.grids.q2, q1 = background.grids.q1, d = background.density;
  if (d) {
    const most = Math.log(Math.max(2, ...d.n));
    for (let i = 0; i < d.x.length; i++) {
      const west = (q2.west + (d.x[i] - 1) * q2.lon_step) / NANO, north = (q2.north - (d.y[i] - 1) * q2.lat_step) / NANO;
      const [x0, y0] = project([west, north]);
      const [x1, y1] = project([west + q2.lon_step / NANO, north - q2.lat_step / NANO]);
      const shade = Math.round(235 - 180 * Math.log(d.n[i]) / most);
      g.fillStyle = `rgb(${shade},${shade},${shade})`;
      g.fillRect(x0, y0, Math.max(1, x1 - x0), Math.max(1, y1 - y0));
    }
    $("density-note").textContent = `first ${d.lines.toLocaleString()} lines of ${d.source}`;
  }
  const e = view;
  g.strokeStyle = "rgba(74,111,165,0.25)"; g.lineWidth = 0.5;
  const firstX = Math.floor((e.west * NANO - q1.west) / q1.lon_step), lastX = Math.ceil((e.east * NANO - q1.west) / q1.lon_step);
  for (let x = firstX; x <= lastX; x++) {
    const [px] = project([(q1.west + x * q1.lon_step) / NANO, e.north]);
    g.beginPath(); g.moveTo(px, 0); g.lineTo(px, off.height); g.stroke();
  }
  const firstY = Math.floor((q1.north - e.north * NANO) / q1.lat_step), lastY = Math.ceil((q1.north - e.south * NANO) / q1.lat_step);
  for (let y = firstY; y <= lastY; y++) {
    const [, py] = project([e.west, (q1.north - y * q1.lat_step) / NANO]);
    g.beginPath(); g.moveTo(0, py); g.lineTo(off.width, py); g.stroke();
  }
  // Axes: longitude along the bottom, latitude along the left, about six ticks each.
  g.fillStyle = "#333"; g.font = "11px sans-serif";
  const tick = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5].find(t => (e.east - e.west) / t <= 8) || 1;
  const digits = tick < 0.01 ? 3 : 2;
  for (let lon = Math.ceil(e.west / tick) * tick; lon <= e.east; lon += tick) {
    const [px] = project([lon, e.south]);
    g.fillText(`${lon.toFixed(digits)}°`, px - 18, off.height - 6);
  }
  for (let lat = Math.ceil(e.south / tick) * tick; lat <= e.north; lat += tick) {
    const [, py] = project([e.west, lat]);
    g.fillText(`${lat.toFixed(digits)}°`, 4, py + 4);
  }
  g.fillText("longitude (°E) →", off.width - 110, off.height - 20);
  g.fillText("latitude (°N) ↑", 4, 14);
  base = off;
}

function arrow(from, to, width, colour) {
  const [x0, y0] = project(from), [x1, y1] = project(to);
  ctx.strokeStyle = colour; ctx.fillStyle = colour; ctx.lineWidth = width;
  if (Math.hypot(x1 - x0, y1 - y0) < 1) {  // starts and ends in one cell: a ring
    ctx.beginPath(); ctx.arc(x0, y0, 6 + width, 0, 2 * Math.PI); ctx.stroke();
    return;
  }
  const angle = Math.atan2(y1 - y0, x1 - x0), head = 6 + 2 * width;
  ctx.beginPath(); ctx.moveTo(x0, y0);
  ctx.lineTo(x1 - head * 0.8 * Math.cos(angle), y1 - head * 0.8 * Math.sin(angle)); ctx.stroke();
  ctx.beginPath(); ctx.moveTo(x1, y1);
  ctx.lineTo(x1 - head * Math.cos(angle - 0.4), y1 - head * Math.sin(angle - 0.4));
  ctx.lineTo(x1 - head * Math.cos(angle + 0.4), y1 - head * Math.sin(angle + 0.4));
  ctx.closePath(); ctx.fill();
}

function label(at, text, colour) {
  const [x, y] = project(at);
  ctx.fillStyle = colour; ctx.beginPath(); ctx.arc(x, y, 8, 0, 2 * Math.PI); ctx.fill();
  ctx.fillStyle = "#fff"; ctx.font = "bold 10px sans-serif"; ctx.textAlign = "center";
  ctx.fillText(text, x, y + 3.5); ctx.textAlign = "start";
}

function drawState(state) {
  ctx.drawImage(base, 0, 0);
  const queries = Object.values(state.queries || {});
  for (const q of queries.filter(q => q.kind === "cells")) {
    for (const c of [...q.rows].reverse()) {
      const [w, s, e, n] = c.bounds, [x0, y0] = project([w, n]), [x1, y1] = project([e, s]);
      ctx.fillStyle = RANKS[c.rank - 1]; ctx.fillRect(x0, y0, Math.max(3, x1 - x0), Math.max(3, y1 - y0));
      ctx.strokeStyle = "#000"; ctx.lineWidth = 1; ctx.strokeRect(x0, y0, Math.max(3, x1 - x0), Math.max(3, y1 - y0));
      ctx.fillStyle = "#000"; ctx.font = "bold 10px sans-serif"; ctx.fillText(String(c.rank), x1 + 2, y0 + 8);
    }
  }
  for (const q of queries.filter(q => q.kind === "routes")) {
    const most = Math.max(1, ...q.rows.map(r => r.count || 0));
    for (const r of [...q.rows].reverse()) arrow(r.from, r.to, 1 + 5 * ((r.count || most) / most), RANKS[r.rank - 1]);
    for (const r of [...q.rows].reverse()) label(r.from, String(r.rank), RANKS[r.rank - 1]);
  }
}

function table(header, rows, rankColumn) {
  const head = "<tr>" + header.map(h => `<th>${h}</th>`).join("") + "</tr>";
  const body = rows.map(row => "<tr>" + row.map((cell, i) => i === 0 && rankColumn
    ? `<td class="rank" style="background:${RANKS[cell - 1]}">${cell}</td>` : `<td>${cell ?? ""}</td>`).join("") + "</tr>").join("");
  return `<table><thead>${head}</thead><tbody>${body}</tbody></table>`;
}

function esc(text) { return String(text ?? "").replace(/[&<>]/g, c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;"})[c]); }

function drawSide(state) {
  const parts = [];
  for (const [name, q] of Object.entries(state.queries || {})) {
    const where = q.line ? `${esc(name)}.csv line ${q.line.toLocaleString()}` : "no line written yet";
    parts.push(`<h2>${esc(name)} <span class="note">(${where}${q.trigger ? ", at " + esc(q.trigger) : ""})</span></h2>`);
    if (q.kind === "routes") {
      parts.push(table(["rank", "start", "end", "trips"], q.rows.map(r => [r.rank, r.start, r.end, r.count ?? "—"]), true));
    } else if (q.kind === "cells") {
      parts.push(table(["rank", "cell", "median profit ($)", "empty taxis", "profitability"],
        q.rows.map(c => [c.rank, c.cell, c.profit, c.empty, c.profitability]), true));
    } else {
      parts.push(table(q.columns.map(esc), q.rows.map(row => row.map(esc)), false));
    }
  }
  $("side").innerHTML = parts.join("");
  // For tests and scripts: the routes on screen as start>end pairs.
  const routes = Object.values(state.queries || {}).filter(q => q.kind === "routes")[0];
  document.body.dataset.routes = routes ? routes.rows.map(r => `${r.start}>${r.end}`).join(" ") : "";
  document.body.dataset.time = state.time || "";
}

function show(state) {
  window.taxiStates.push(state);
  if (window.taxiStates.length > 2000) window.taxiStates.shift();
  window.taxiState = state;
  $("time").textContent = state.time || "—";
  $("lines").textContent = (state.lines || 0).toLocaleString();
  $("rate").textContent = Math.round(state.lines_per_s || 0).toLocaleString();
  $("delays").textContent = Object.entries(state.delay_ms || {})
    .map(([q, d]) => `${q} delay p50 ${d.p50.toFixed(3)} ms · p99 ${d.p99.toFixed(3)} ms`).join(" | ");
  $("done").textContent = state.done ? "run complete" : "";
  drawState(state); drawSide(state);
}

async function startView() {
  $("player").hidden = false; $("rate-box").hidden = true;
  const steps = await (await fetch("steps.json")).json();
  const slider = $("slider");
  slider.max = Math.max(0, steps.count - 1);
  let pending = 0;
  async function go(i) {
    i = Math.max(0, Math.min(steps.count - 1, i));
    slider.value = i;
    const ticket = ++pending;
    const state = await (await fetch(`at.json?i=${i}`)).json();
    if (ticket !== pending) return;  // a later step was asked for meanwhile
    $("step").textContent = `instant ${i + 1} of ${steps.count.toLocaleString()}`;
    document.body.dataset.step = String(i);
    show(state);
  }
  slider.addEventListener("input", () => go(Number(slider.value)));
  $("prev").addEventListener("click", () => go(Number(slider.value) - 1));
  $("next").addEventListener("click", () => go(Number(slider.value) + 1));
  document.addEventListener("keydown", e => {
    if (e.key === "ArrowLeft") go(Number(slider.value) - 1);
    if (e.key === "ArrowRight") go(Number(slider.value) + 1);
  });
  window.taxiGo = go;
  await go(steps.count - 1);
}

async function main() {
  background = await (await fetch("background.json")).json();
  $("mode").textContent = background.mode === "view" ? `view of ${background.folder}` : "live";
  view = {...background.extent};
  zoomable();
  redraw();
  if (background.mode === "view") return startView();
  const events = new EventSource("events");
  events.onmessage = message => show(JSON.parse(message.data));
}

main();
