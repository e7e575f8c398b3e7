// The operator's page: static HTML and one script, no framework. It holds no data itself: it asks
// for the token once (kept for the tab only) and reads the JSON API with it.

/** Lets the page's own script and styles run, and nothing else. */
export const ADMIN_PAGE_CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

export const ADMIN_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>rewardbus · operator</title>
<link rel="icon" href="data:,">
<style>
  :root { color-scheme: dark; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
  body { margin: 0; background: #10131a; color: #e8ecf4; padding: 20px; }
  h1 { font-size: 20px; margin: 0 0 16px; } h2 { font-size: 15px; margin: 0 0 10px; color: #c9d2e6; }
  section { background: #1b2130; border-radius: 12px; padding: 16px; margin-bottom: 16px; }
  .grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(160px, 1fr)); gap: 12px; }
  .figure b { display: block; font-size: 24px; } .figure span { color: #8793ad; font-size: 13px; }
  table { width: 100%; border-collapse: collapse; font-size: 13px; } th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid #2a3247; }
  th { color: #8793ad; font-weight: 600; } button { font: inherit; border: 0; border-radius: 6px; padding: 4px 10px; cursor: pointer; background: #2d5fa8; color: #fff; margin-right: 4px; }
  button:hover { background: #3b73c4; } button.danger { background: #a8322d; } button.danger:hover { background: #c13c36; }
  input { font: inherit; padding: 6px 10px; border-radius: 6px; border: 1px solid #3a4460; background: #10131a; color: inherit; }
  .chart { display: flex; align-items: flex-end; gap: 8px; height: 120px; } .bar { flex: 1; background: #f7931a; border-radius: 4px 4px 0 0; min-height: 2px; }
  .days { display: flex; gap: 8px; font-size: 11px; color: #8793ad; } .days span { flex: 1; text-align: center; }
  .muted { color: #8793ad; } .error { color: #ff8b7d; } #app[hidden], #login[hidden] { display: none; }
</style></head>
<body>
  <h1>rewardbus · operator</h1>
  <form id="login"><input id="token" type="password" placeholder="RELAY_ADMIN_TOKEN" autocomplete="off" size="40"> <input id="operator" placeholder="your name (for the audit trail)"> <button type="submit">Open</button> <span id="login-error" class="error"></span></form>
  <div id="app" hidden>
    <section><h2>Today (UTC) <span id="day" class="muted"></span></h2><div class="grid" id="today"></div></section>
    <section><h2>Sats paid, last 7 days</h2><div class="chart" id="chart"></div><div class="days" id="days"></div></section>
    <section><h2>Awaiting review</h2><table><thead><tr><th>Player</th><th>Achievement</th><th>Sats</th><th>Reason</th><th>Payment id</th><th>Age</th><th></th></tr></thead><tbody id="review"></tbody></table></section>
    <section><h2>Recent payouts and refusals</h2><p><input id="player" placeholder="player (userId)"> <input id="achievement" placeholder="achievement"> <button id="filter">Filter</button></p>
      <table><thead><tr><th>When</th><th>Player</th><th>Achievement</th><th>Sats</th><th>State</th><th>Reason</th></tr></thead><tbody id="recent"></tbody></table></section>
    <section><h2>Webhooks</h2><table><thead><tr><th>Received</th><th>Type</th><th>Reference</th><th>Acted on</th></tr></thead><tbody id="webhooks"></tbody></table></section>
    <section><h2>Payments service</h2><div class="grid" id="health"></div></section>
  </div>
  <script src="/admin/app.js"></script>
</body></html>`;

export const ADMIN_JS = `'use strict';
const $ = (id) => document.getElementById(id);
const KEY = 'rewardbus-admin-token';
const el = (tag, text, cls) => { const e = document.createElement(tag); if (text !== undefined) e.textContent = String(text); if (cls) e.className = cls; return e; };
const row = (cells) => { const tr = el('tr'); for (const c of cells) { const td = el('td'); if (c instanceof Node) td.append(c); else td.textContent = c === null || c === undefined ? '–' : String(c); tr.append(td); } return tr; };
const figure = (value, label) => { const d = el('div', undefined, 'figure'); d.append(el('b', value), el('span', label)); return d; };
const age = (s) => s < 120 ? s + ' s' : s < 7200 ? Math.round(s / 60) + ' min' : Math.round(s / 3600) + ' h';

async function api(path, init = {}) {
  const res = await fetch('/admin/api' + path, { ...init, headers: { authorization: 'Bearer ' + sessionStorage.getItem(KEY), 'x-operator': sessionStorage.getItem(KEY + ':who') || 'operator', ...(init.body ? { 'content-type': 'application/json' } : {}) } });
  if (res.status === 401) { sessionStorage.removeItem(KEY); show(false, 'That token was refused.'); throw new Error('unauthorized'); }
  const body = await res.json();
  if (!res.ok) throw new Error(body.detail || body.title || res.status);
  return body;
}

function show(open, message) {
  $('app').hidden = !open; $('login').hidden = open; $('login-error').textContent = message || '';
  if (!open) for (const id of ['today', 'chart', 'days', 'review', 'recent', 'webhooks', 'health']) $(id).replaceChildren();
}

async function act(entry, action) {
  let body;
  if (action === 'mark-paid') { const tx = prompt('Paid: the service\\'s transaction id for ' + entry.sats + ' sats to ' + (entry.gamertag || entry.userId)); if (!tx) return; body = JSON.stringify({ transactionId: tx }); }
  else if (!confirm((action === 'reconcile' ? 'Ask the payments service about ' : 'Nothing was paid: mark failed ') + entry.sats + ' sats to ' + (entry.gamertag || entry.userId) + '?')) return;
  try { const r = await api('/review/' + encodeURIComponent(entry.id) + '/' + action, { method: 'POST', ...(body ? { body } : {}) }); if (!r.settled) alert(r.detail); }
  catch (e) { alert(e.message); }
  await load();
}

async function load() {
  const [summary, review, recent, webhooks, health] = await Promise.all([
    api('/summary'), api('/review'), api('/recent?player=' + encodeURIComponent($('player').value) + '&achievement=' + encodeURIComponent($('achievement').value)), api('/webhooks'), api('/health'),
  ]);
  const t = summary.today;
  $('day').textContent = t.day;
  const states = Object.entries(t.byState).map(([s, n]) => s.replace('_', ' ') + ' ' + n).join(' · ') || 'none';
  $('today').replaceChildren(figure(t.satsPaid.toLocaleString(), 'sats paid'), figure(t.playersPaid, 'players paid'), figure(t.budget.used.toLocaleString(), 'budget used'),
    figure(t.budget.left === null ? 'no limit' : t.budget.left.toLocaleString(), 'budget left'), figure(states, 'payouts by state'));
  const max = Math.max(1, ...summary.last7Days.map((d) => d.satsPaid));
  $('chart').replaceChildren(...summary.last7Days.map((d) => { const b = el('div', undefined, 'bar'); b.style.height = Math.round((d.satsPaid / max) * 100) + '%'; b.title = d.day + ': ' + d.satsPaid + ' sats'; return b; }));
  $('days').replaceChildren(...summary.last7Days.map((d) => el('span', d.day.slice(5) + ' · ' + d.satsPaid)));
  $('review').replaceChildren(...(review.entries.length ? review.entries.map((e) => {
    const actions = el('span');
    for (const [action, label, cls] of [['reconcile', 'Check with the service'], ['mark-paid', 'Mark paid'], ['mark-failed', 'Mark failed', 'danger']]) { const b = el('button', label, cls); b.dataset.action = action; b.onclick = () => act(e, action); actions.append(b); }
    const tr = row([(e.gamertag || '?') + ' (' + e.userId + ')', e.achievementId, e.sats, e.reason, e.paymentId, age(e.ageSeconds), actions]);
    tr.dataset.id = e.id; return tr;
  }) : [row(['Nothing to review.'])]));
  $('recent').replaceChildren(...recent.entries.map((e) => row([e.createdAt.replace('T', ' ').slice(0, 19), e.gamertag || e.userId, e.achievementId, e.sats, e.state.replace('_', ' '), e.reason])));
  $('webhooks').replaceChildren(...(webhooks.webhooks.length ? webhooks.webhooks.map((w) => row([w.receivedAt.replace('T', ' ').slice(0, 19), w.type, w.referenceId, w.actedOn ? 'yes' : 'no'])) : [row(['None yet.'])]));
  $('health').replaceChildren(figure(health.calls, 'calls since start'), figure((health.errorRate * 100).toFixed(1) + '%', 'error rate'), figure(health.meanLatencyMs === null ? '–' : health.meanLatencyMs + ' ms', 'mean latency'),
    figure(health.walletBalanceSats === null ? 'not reported' : health.walletBalanceSats, 'project wallet'));
}

$('login').onsubmit = async (ev) => {
  ev.preventDefault();
  sessionStorage.setItem(KEY, $('token').value.trim()); sessionStorage.setItem(KEY + ':who', $('operator').value.trim() || 'operator');
  $('token').value = '';
  try { await load(); show(true); } catch (e) { if (e.message !== 'unauthorized') show(false, e.message); }
};
$('filter').onclick = () => void load();
if (sessionStorage.getItem(KEY)) load().then(() => show(true), () => undefined);
`;
