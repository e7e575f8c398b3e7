// The operator's page script (served as /admin/app.js): no framework. It holds no data itself: it
// asks for the token once (kept for the tab only) and reads the JSON API (docs/admin-api.md) with it.
export {};

interface Entry {
  id: string;
  userId: string;
  gamertag: string | null;
  achievementId: string;
  sats: number;
  state: string;
  reason: string | null;
  paymentId: string | null;
  address: string | null;
  createdAt: string;
  ageSeconds: number;
}
interface Summary {
  today: { day: string; satsPaid: number; byState: Record<string, number>; playersPaid: number; budget: { limit: number | null; used: number; left: number | null } };
  /** Balance mode: what the players' balances add up to, beside the wallet. */
  balances?: { owedSats: number; walletBalanceSats: number | null; short: boolean };
  /** With dollar prices or limits: the price in force, its age, and today's spend in dollars. */
  dollars?: { btcUsd: number | null; priceAgeSeconds: number | null; priceError?: string; usedUsd: number; budgetUsd: number | null; leftUsd: number | null };
  last7Days: Array<{ day: string; satsPaid: number }>;
}
interface Webhook {
  eventId: string;
  type: string;
  referenceId?: string;
  receivedAt: string;
  actedOn: boolean;
}
interface Health {
  calls: number;
  errors: number;
  errorRate: number;
  meanLatencyMs: number | null;
  walletBalanceSats: number | null;
  walletLow: boolean;
  walletLowSats: number;
}
/** A referral as /admin/api/referrals lists it (core/ports/referral-store.ts, times as ISO strings). */
interface Referral {
  programId: string;
  refereeId: string;
  referrerId?: string;
  state: 'pending' | 'qualified' | 'refused';
  reason?: string;
  linkedAt: string;
  referrerCapped?: boolean;
}
type Decision = { settled: true; entry: Entry } | { settled: false; entry: Entry; detail: string };

const KEY = 'rewardbus-admin-token';

function $<T extends HTMLElement = HTMLElement>(id: string): T {
  const e = document.getElementById(id);
  if (!e) throw new Error(`#${id} is missing from the page`);
  return e as T;
}

function el(tag: string, text?: string | number, cls?: string): HTMLElement {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

function row(cells: Array<Node | string | number | null | undefined>): HTMLTableRowElement {
  const tr = document.createElement('tr');
  for (const c of cells) {
    const td = document.createElement('td');
    if (c instanceof Node) td.append(c);
    else td.textContent = c === null || c === undefined ? '–' : String(c);
    tr.append(td);
  }
  return tr;
}

function figure(value: string | number, label: string): HTMLElement {
  const d = el('div', undefined, 'figure');
  d.append(el('b', value), el('span', label));
  return d;
}

const age = (s: number) => (s < 120 ? `${s} s` : s < 7200 ? `${Math.round(s / 60)} min` : `${Math.round(s / 3600)} h`);

async function api<T>(path: string, init: RequestInit = {}): Promise<T> {
  const res = await fetch(`/admin/api${path}`, {
    ...init,
    headers: {
      authorization: `Bearer ${sessionStorage.getItem(KEY)}`,
      // Header values are Latin-1: the name travels percent-encoded, so any script is fine.
      'x-operator': encodeURIComponent(sessionStorage.getItem(`${KEY}:who`) || 'operator'),
      ...(init.body ? { 'content-type': 'application/json' } : {}),
    },
  });
  if (res.status === 401) {
    sessionStorage.removeItem(KEY);
    show(false, 'That token was refused.');
    throw new Error('unauthorized');
  }
  const body = (await res.json()) as T & { detail?: string; title?: string };
  if (!res.ok) throw new Error(body.detail || body.title || String(res.status));
  return body;
}

function show(open: boolean, message?: string) {
  $('app').hidden = !open;
  $('login').hidden = open;
  $('login-error').textContent = message || '';
  if (!open) for (const id of ['today', 'chart', 'days', 'held', 'review', 'recent', 'referrals', 'webhooks', 'health']) $(id).replaceChildren();
}

async function act(entry: Entry, action: 'reconcile' | 'mark-paid' | 'mark-failed' | 'approve' | 'deny') {
  const who = `${entry.sats} sats to ${entry.gamertag || entry.userId}`;
  let body: string | undefined;
  if (action === 'approve' || action === 'deny') {
    if (!confirm(`${action === 'approve' ? 'Pay' : 'Refuse'} ${who} for ${entry.achievementId}?`)) return;
  } else if (action === 'mark-paid') {
    const tx = prompt(`Paid: the service's transaction id for ${who}`);
    if (!tx) return;
    body = JSON.stringify({ transactionId: tx });
  } else if (!confirm(`${action === 'reconcile' ? 'Ask the payments service about' : 'Nothing was paid: mark failed'} ${who}?`)) return;
  try {
    const r = await api<Decision>(`/review/${encodeURIComponent(entry.id)}/${action}`, { method: 'POST', ...(body ? { body } : {}) });
    if (!r.settled) alert(r.detail);
  } catch (e) {
    alert((e as Error).message);
  }
  await load();
}

async function load() {
  const filter = `?player=${encodeURIComponent($<HTMLInputElement>('player').value)}&achievement=${encodeURIComponent($<HTMLInputElement>('achievement').value)}`;
  const [summary, held, review, recent, webhooks, health, referrals] = await Promise.all([
    api<Summary>('/summary'),
    api<{ entries: Entry[] }>('/held'),
    api<{ entries: Entry[] }>('/review'),
    api<{ entries: Entry[] }>(`/recent${filter}`),
    api<{ webhooks: Webhook[] }>('/webhooks'),
    api<Health>('/health'),
    api<{ referrals: Referral[] }>('/referrals'),
  ]);
  const t = summary.today;
  $('day').textContent = t.day;
  const states =
    Object.entries(t.byState)
      .map(([s, n]) => `${s.replace('_', ' ')} ${n}`)
      .join(' · ') || 'none';
  $('today').replaceChildren(
    figure(t.satsPaid.toLocaleString(), 'sats paid'),
    figure(t.playersPaid, 'players paid'),
    figure(t.budget.used.toLocaleString(), 'budget used'),
    figure(t.budget.left === null ? 'no limit' : t.budget.left.toLocaleString(), 'budget left'),
    figure(states, 'payouts by state'),
    ...(summary.balances
      ? [figure(summary.balances.owedSats.toLocaleString(), summary.balances.short ? 'owed to players: MORE than the wallet holds' : 'owed to players (balances)')]
      : []),
    ...(summary.dollars ? dollarFigures(summary.dollars) : []),
  );
  const max = Math.max(1, ...summary.last7Days.map((d) => d.satsPaid));
  $('chart').replaceChildren(
    ...summary.last7Days.map((d) => {
      const b = el('div', undefined, 'bar');
      b.style.height = `${Math.round((d.satsPaid / max) * 100)}%`;
      b.title = `${d.day}: ${d.satsPaid} sats`;
      return b;
    }),
  );
  $('days').replaceChildren(...summary.last7Days.map((d) => el('span', `${d.day.slice(5)} · ${d.satsPaid}`)));
  const actions = [
    ['reconcile', 'Check with the service', ''],
    ['mark-paid', 'Mark paid', ''],
    ['mark-failed', 'Mark failed', 'danger'],
  ] as const;
  $('review').replaceChildren(
    ...(review.entries.length
      ? review.entries.map((e) => {
          const buttons = el('span');
          for (const [action, label, cls] of actions) {
            const b = el('button', label, cls);
            b.dataset.action = action;
            b.onclick = () => void act(e, action);
            buttons.append(b);
          }
          const tr = row([`${e.gamertag || '?'} (${e.userId})`, e.achievementId, e.sats, e.reason, e.paymentId, age(e.ageSeconds), buttons]);
          tr.dataset.id = e.id;
          return tr;
        })
      : [row(['Nothing to review.'])]),
  );
  // Each row is the claim's id (data-id); its buttons say what they do (data-action="approve" | "deny").
  const heldActions = [
    ['approve', 'Approve', ''],
    ['deny', 'Deny', 'danger'],
  ] as const;
  $('held').replaceChildren(
    ...(held.entries.length
      ? held.entries.map((e) => {
          const buttons = el('span');
          for (const [action, label, cls] of heldActions) {
            const b = el('button', label, cls);
            b.dataset.action = action;
            b.onclick = () => void act(e, action);
            buttons.append(b);
          }
          const tr = row([`${e.gamertag || '?'} (${e.userId})`, e.achievementId, e.sats, e.address, age(e.ageSeconds), buttons]);
          tr.dataset.id = e.id;
          return tr;
        })
      : [row(['Nothing is held.'])]),
  );
  $('recent').replaceChildren(
    ...recent.entries.map((e) => row([e.createdAt.replace('T', ' ').slice(0, 19), e.gamertag || e.userId, e.achievementId, e.sats, e.state.replace('_', ' '), e.reason])),
  );
  $('referrals').replaceChildren(
    ...(referrals.referrals.length
      ? referrals.referrals.map((r) => {
          const state = r.state === 'qualified' && r.referrerCapped ? 'qualified (referrer past its daily cap)' : r.state;
          return row([r.linkedAt.replace('T', ' ').slice(0, 19), r.referrerId ?? '(unknown code)', r.refereeId, r.programId, state, r.reason]);
        })
      : [row(['No referrals yet.'])]),
  );
  $('webhooks').replaceChildren(
    ...(webhooks.webhooks.length
      ? webhooks.webhooks.map((w) => row([w.receivedAt.replace('T', ' ').slice(0, 19), w.type, w.referenceId, w.actedOn ? 'yes' : 'no']))
      : [row(['None yet.'])]),
  );
  $('wallet-warning').hidden = !health.walletLow;
  $('wallet-warning').textContent = health.walletLow
    ? `The project wallet is low (${health.walletBalanceSats === null ? 'a payout was refused for its balance' : `${health.walletBalanceSats.toLocaleString()} sats`}` +
      `; the mark is ${health.walletLowSats.toLocaleString()}): top it up, or payouts will fail.`
    : '';
  $('health').replaceChildren(
    figure(health.calls, 'calls since start'),
    figure(`${(health.errorRate * 100).toFixed(1)}%`, 'error rate'),
    figure(health.meanLatencyMs === null ? '–' : `${health.meanLatencyMs} ms`, 'mean latency'),
    figure(health.walletBalanceSats === null ? 'not reported' : health.walletBalanceSats.toLocaleString(), 'project wallet (sats)'),
  );
}

$('login').onsubmit = async (ev) => {
  ev.preventDefault();
  sessionStorage.setItem(KEY, $<HTMLInputElement>('token').value.trim());
  sessionStorage.setItem(`${KEY}:who`, $<HTMLInputElement>('operator').value.trim() || 'operator');
  $<HTMLInputElement>('token').value = '';
  try {
    await load();
    show(true);
  } catch (e) {
    if ((e as Error).message !== 'unauthorized') show(false, (e as Error).message);
  }
};
$('filter').onclick = () => void load();
if (sessionStorage.getItem(KEY))
  load().then(
    () => show(true),
    () => undefined,
  );

/** The price in force, its age, and today's spend in dollars beside the dollar budget (issue 38). */
function dollarFigures(d: NonNullable<Summary['dollars']>): HTMLElement[] {
  const usd = (n: number) => `$${n.toLocaleString(undefined, { maximumFractionDigits: 6 })}`;
  return [
    figure(d.btcUsd === null ? 'none yet' : usd(d.btcUsd), d.priceError ? `BTC/USD in force (last read failed: ${d.priceError})` : 'BTC/USD in force'),
    figure(d.priceAgeSeconds === null ? '—' : `${d.priceAgeSeconds} s`, 'price age'),
    figure(usd(d.usedUsd), 'dollars used today'),
    figure(d.leftUsd === null ? 'no dollar budget' : usd(d.leftUsd), 'dollar budget left'),
  ];
}
