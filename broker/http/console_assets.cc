#include "broker/http/console_assets.h"

#include "broker/common/assert.h"

namespace mqlab::http {
namespace {

constexpr std::string_view kStyle = R"CSS(
:root { --bg:#f4f6f9; --card:#fff; --ink:#1d2733; --muted:#64748b; --line:#e2e8f0; --accent:#2563eb;
        --ok:#16a34a; --warn:#d97706; --bad:#dc2626; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--ink);
       font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif; }
header { background:#0f172a; color:#e2e8f0; padding:14px 24px; display:flex; flex-wrap:wrap; align-items:center; gap:8px 24px; }
header h1 { font-size:20px; margin:0; font-weight:600; color:#fff; }
header .title { display:flex; align-items:center; gap:10px; }
header .ident { color:#94a3b8; font-size:13px; }
header .ident b { color:#e2e8f0; font-weight:500; }
header .updated { margin-left:auto; color:#94a3b8; font-size:12px; }
.dot { width:12px; height:12px; border-radius:50%; background:#64748b; display:inline-block; }
.dot.ok { background:var(--ok); } .dot.warn { background:var(--warn); } .dot.bad { background:var(--bad); }
.badge { font-size:12px; font-weight:600; padding:2px 8px; border-radius:10px; background:#334155; color:#e2e8f0; }
.badge.master { background:#1d4ed8; } .badge.sync { background:#7c3aed; } .badge.slave { background:#0f766e; }
.pill { font-size:12px; padding:1px 7px; border-radius:9px; background:#e2e8f0; color:#334155; white-space:nowrap; }
.pill.ok { background:#dcfce7; color:#166534; } .pill.warn { background:#fef3c7; color:#92400e; }
.pill.bad { background:#fee2e2; color:#991b1b; }
.banner { background:#fee2e2; color:#991b1b; padding:8px 24px; border-bottom:1px solid #fecaca; }
.hidden { display:none; }
main { padding:16px 24px 32px; max-width:1400px; }
section { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:12px 16px; margin-bottom:16px; }
section h2 { font-size:15px; margin:0 0 10px; font-weight:600; display:flex; align-items:center; gap:10px; }
section h2 .aside { font-weight:400; font-size:12px; color:var(--muted); margin-left:auto; }
.cards { display:grid; grid-template-columns:repeat(auto-fill,minmax(240px,1fr)); gap:12px; background:none; border:none; padding:0; }
.card { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:10px 14px; }
.card .label { color:var(--muted); font-size:12px; text-transform:uppercase; letter-spacing:.04em; }
.card .value { font-size:24px; font-weight:600; margin:2px 0; font-variant-numeric:tabular-nums; }
.card .sub { color:var(--muted); font-size:12px; }
.grid2 { display:grid; grid-template-columns:repeat(auto-fit,minmax(420px,1fr)); gap:16px; }
.grid2 > section { margin-bottom:0; }
.grid2 { margin-bottom:16px; }
table { border-collapse:collapse; width:100%; font-size:13px; }
th { text-align:left; color:var(--muted); font-weight:500; border-bottom:1px solid var(--line); padding:5px 8px; white-space:nowrap; }
td { border-bottom:1px solid #f1f5f9; padding:5px 8px; vertical-align:top; }
td.num, th.num { text-align:right; font-variant-numeric:tabular-nums; }
tr:last-child td { border-bottom:none; }
.empty { color:var(--muted); font-style:italic; padding:4px 0; }
.note { color:var(--muted); font-size:12px; margin-top:6px; }
.kv { display:grid; grid-template-columns:max-content 1fr; gap:4px 16px; font-size:13px; }
.kv dt { color:var(--muted); } .kv dd { margin:0; font-variant-numeric:tabular-nums; }
.bar { height:10px; background:#e2e8f0; border-radius:5px; overflow:hidden; margin:6px 0 10px; }
.bar > div { height:100%; background:var(--accent); }
.hist { display:flex; align-items:flex-end; gap:2px; height:90px; border-bottom:1px solid var(--line); }
.hist > div { flex:1; background:#93c5fd; min-height:1px; }
.hist-axis { display:flex; gap:2px; font-size:10px; color:var(--muted); }
.hist-axis > div { flex:1; text-align:left; overflow:visible; white-space:nowrap; }
.lagbar { display:inline-block; height:8px; background:#f97316; border-radius:4px; vertical-align:middle; margin-left:6px; }
a { color:var(--accent); text-decoration:none; } a:hover { text-decoration:underline; }
footer { color:var(--muted); font-size:12px; padding:0 24px 24px; }
label.toggle { font-weight:400; font-size:12px; color:var(--muted); display:flex; align-items:center; gap:4px; }
)CSS";

// Helpers both pages use. el() appends strings as text nodes: nothing a
// broker reports is ever parsed as HTML.
constexpr std::string_view kHelpers = R"JS(
'use strict';
function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (key === 'class') node.className = value;
    else if (key === 'style') node.style.cssText = value;
    else node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}
function show(id, ...nodes) { document.getElementById(id).replaceChildren(...nodes); }
function fmtInt(n) { return (n === null || n === undefined) ? '\u2013' : Number(n).toLocaleString('en-US'); }
function fmtBytes(n) {
  if (n === null || n === undefined || !isFinite(n)) return '\u2013';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let value = Number(n), unit = 0;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) { value /= 1024; unit++; }
  return (unit === 0 ? value.toFixed(0) : value.toFixed(value < 10 ? 2 : 1)) + ' ' + units[unit];
}
function fmtMs(ms) {
  if (ms === null || ms === undefined || !isFinite(ms)) return '\u2013';
  if (ms < 1) return (ms * 1000).toFixed(0) + ' \u00b5s';
  if (ms < 1000) return ms.toFixed(ms < 10 ? 2 : 1) + ' ms';
  return (ms / 1000).toFixed(2) + ' s';
}
function fmtRate(perSecond) { return perSecond === null ? '\u2013' : (perSecond < 10 ? perSecond.toFixed(1) : fmtInt(Math.round(perSecond))); }
function fmtDuration(ms) {
  let s = Math.max(0, Math.floor(ms / 1000));
  const d = Math.floor(s / 86400); s -= d * 86400;
  const h = Math.floor(s / 3600); s -= h * 3600;
  const m = Math.floor(s / 60); s -= m * 60;
  return (d ? d + 'd ' : '') + (d || h ? h + 'h ' : '') + (d || h || m ? m + 'm ' : '') + s + 's';
}
// columns: [{label, num}], rows: arrays of cells (text or nodes).
function table(columns, rows, emptyText, limit) {
  if (rows.length === 0) return el('div', {class: 'empty'}, emptyText);
  const shown = limit ? rows.slice(0, limit) : rows;
  const head = el('tr', null, columns.map(c => el('th', c.num ? {class: 'num'} : null, c.label)));
  const body = shown.map(r => el('tr', null, r.map((cell, i) => el('td', columns[i].num ? {class: 'num'} : null, cell))));
  const result = el('div', null, el('table', null, el('thead', null, head), el('tbody', null, body)));
  if (shown.length < rows.length) result.append(el('div', {class: 'note'}, 'and ' + fmtInt(rows.length - shown.length) + ' more rows (see /metrics or /api/status for all)'));
  return result;
}
function pill(text, kind) { return el('span', {class: 'pill ' + (kind || '')}, text); }
function card(label, value, sub) { return el('div', {class: 'card'}, el('div', {class: 'label'}, label), el('div', {class: 'value'}, value), el('div', {class: 'sub'}, sub || '\u00a0')); }
function setBanner(text) {
  const banner = document.getElementById('banner');
  banner.textContent = text || '';
  banner.classList.toggle('hidden', !text);
}
// Polls url every intervalMs; render(data) on success, a banner on failure.
function refreshLoop(url, intervalMs, render) {
  async function tick() {
    try {
      const response = await fetch(url, {cache: 'no-store'});
      if (!response.ok) throw new Error('HTTP ' + response.status);
      render(await response.json());
      setBanner(null);
      document.getElementById('updated').textContent = 'updated ' + new Date().toLocaleTimeString() + ' \u00b7 every ' + (intervalMs / 1000) + ' s';
    } catch (error) {
      setBanner('Cannot reach ' + location.host + url + ': ' + error.message + '. Retrying every ' + (intervalMs / 1000) + ' s.');
    } finally {
      setTimeout(tick, intervalMs);
    }
  }
  tick();
}
)JS";

}  // namespace

std::string console_document(std::string_view title, std::string_view body, std::string_view script) {
  MQ_ASSERT(title.find('<') == std::string_view::npos);  // titles are ours, plain text
  std::string html;
  html.reserve(kStyle.size() + kHelpers.size() + body.size() + script.size() + 512);
  html += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  html += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>";
  html += title;
  html += "</title>\n<style>";
  html += kStyle;
  html += "</style>\n</head>\n<body>\n";
  html += body;
  html += "\n<script>";
  html += kHelpers;
  html += script;
  html += "</script>\n</body>\n</html>\n";
  return html;
}

}  // namespace mqlab::http
