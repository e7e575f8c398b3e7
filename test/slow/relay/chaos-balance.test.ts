// The chaos run in balance mode (issue 36): the payments service behind the faulty proxy, 1,000
// credits and 200 withdrawals from 20 players retried with their own keys, the relay killed with
// SIGKILL five times and restarted on the same ledger, then reconciled. For each player, credits −
// withdrawn = the balance the relay answers; every withdrawal the service paid is one the ledger
// holds, none twice; credits never reach the service.

import type { ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { faultyService, untilFinal } from '../../helpers/faulty-service.js';
import { freePort } from '../../helpers/processes.js';
import { relayCommand, startRelayCommand } from '../../helpers/relay-command.js';
import { seededRandom } from '../../helpers/seeded-random.js';
import { tally } from '../../helpers/tally.js';

const KEY = `chaos_${randomUUID()}`;
const TIMEOUT_MS = 400;
const PLAYERS = 20;
const CREDITS_PER_PLAYER = 50;
const WITHDRAWALS_PER_PLAYER = 10;
const SATS = 10;
const KILLS = 5;

// The chaos's own timing (the time between kills): never a wait for a condition.
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const closers: Array<() => unknown> = [];
afterAll(() => closers.forEach((c) => c()));

type Row = { id: string; user_id: string; idempotency_key: string; kind: string; state: string; sats: number; reason: string | null };

describe('the chaos run in balance mode', () => {
  it('keeps every balance whole and pays each withdrawal at most once while the relay is killed', async () => {
    const rnd = seededRandom(36);
    const service = await faultyService(rnd, KEY, TIMEOUT_MS);
    closers.push(service.close);
    const dataDir = mkdtempSync(join(tmpdir(), 'rewardbus-chaos-balance-'));
    const catalog = join(dataDir, 'catalog.json');
    writeFileSync(catalog, JSON.stringify({ achievements: [{ id: 'chaos', title: 'Chaos', sats: SATS, repeat: { kind: 'cooldown', seconds: 0 } }] }));
    const port = await freePort();
    const env = {
      ...process.env,
      PORT: String(port),
      PAYMENTS_API_KEY: KEY,
      PAYMENTS_BASE_URL: service.proxyUrl,
      PAYMENTS_TIMEOUT_MS: String(TIMEOUT_MS),
      RELAY_PUBLIC_URL: 'https://relay.example.com',
      RELAY_DATA_DIR: dataDir,
      RELAY_CATALOG: catalog,
      RELAY_PAYOUT_MODE: 'balance',
      RELAY_MIN_WITHDRAWAL_SATS: String(SATS),
      RELAY_USER_DAILY_CAP_SATS: '0',
      RELAY_DAILY_BUDGET_SATS: '0',
      RELAY_RATE_LIMIT_PER_MINUTE: '0',
    };
    let relay: ChildProcess | undefined;
    const start = async () => {
      relay = (await startRelayCommand(env)).child;
    };
    closers.push(() => relay?.kill('SIGKILL'));
    await start();
    const base = `http://127.0.0.1:${port}`;

    const players = await Promise.all(
      Array.from({ length: PLAYERS }, (_, i) =>
        untilFinal(
          () => fetch(`${base}/v1/players`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ gamertag: `chaos-${i}` }) }),
          async (r) => (r.status === 201 ? ((await r.json()) as { token: string; userId: string }) : undefined),
        ),
      ),
    );
    const post = (path: string, token: string, key: string, body: unknown) => () =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'idempotency-key': key },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
    /** Final: a record that is not pending, or a refusal that is (a 4xx other than in-flight and rate-limited). */
    const finalOf = async (r: Response) => {
      if (r.status >= 500 || r.status === 429) return undefined;
      const body = (await r.json()) as { status?: string; code?: string };
      if (body.code === 'request_in_flight' || body.status === 'pending') return undefined;
      return body.status ?? body.code!;
    };

    const outcomes: Array<{ kind: 'credit' | 'withdrawal'; key: string; outcome: string }> = [];
    const work = players.map(async ({ token }) => {
      const steps = CREDITS_PER_PLAYER + WITHDRAWALS_PER_PLAYER;
      for (let n = 0; n < steps; n++) {
        const key = randomUUID();
        // Every sixth step a withdrawal of 10 to 50 sats: the balance has room for it, as a rule.
        if (n % 6 === 5) {
          const sats = SATS * (1 + Math.floor(rnd() * 5));
          outcomes.push({ kind: 'withdrawal', key, outcome: await untilFinal(post('/v1/withdrawals', token, key, { sats }), finalOf) });
        } else outcomes.push({ kind: 'credit', key, outcome: await untilFinal(post('/v1/rewards', token, key, { achievementId: 'chaos' }), finalOf) });
      }
    });
    const killer = (async () => {
      for (let k = 0; k < KILLS; k++) {
        await sleep(400 + rnd() * 800);
        const dying = relay!;
        const exited = new Promise((r) => dying.once('exit', r));
        dying.kill('SIGKILL');
        await exited;
        await start();
      }
    })();
    await Promise.all([...work, killer]);
    relay!.kill('SIGTERM');
    await new Promise((r) => relay!.once('exit', r));

    // The operator reconciles what has a transaction id, through the payment-status endpoint.
    const reconcile = await promisify(execFile)(process.execPath, relayCommand('review', 'reconcile'), {
      env: { ...env, PAYMENTS_BASE_URL: service.directUrl },
    });

    const db = new Database(join(dataDir, 'ledger.sqlite'), { readonly: true });
    const rows = db.prepare('SELECT id, user_id, idempotency_key, kind, state, sats, reason FROM rewards').all() as Row[];
    db.close();
    const byKey = new Map(rows.map((r) => [r.idempotency_key, r]));
    const byId = new Map(rows.map((r) => [r.id, r]));

    expect(outcomes.filter((o) => o.kind === 'credit')).toHaveLength(PLAYERS * CREDITS_PER_PLAYER);
    expect(outcomes.filter((o) => o.kind === 'withdrawal')).toHaveLength(PLAYERS * WITHDRAWALS_PER_PLAYER);
    // Every credit is credited (no cap, no budget): a credit never waits on the service.
    expect(outcomes.filter((o) => o.kind === 'credit' && byKey.get(o.key)?.state !== 'credited')).toEqual([]);
    // Every withdrawal answered with a record is in the ledger, finished.
    const recorded = outcomes.filter((o) => o.kind === 'withdrawal' && ['paid', 'failed', 'needs_review'].includes(o.outcome));
    for (const o of recorded) expect(['paid', 'failed', 'needs_review']).toContain(byKey.get(o.key)?.state);

    // The service paid only withdrawals, none twice; each the ledger calls paid, exactly once.
    const paidByService = new Map<string, number>();
    for (const p of service.sandbox.payments()) {
      const id = /rewardbus ([0-9a-f-]{36})/.exec(p.comment)?.[1] ?? 'unknown';
      paidByService.set(id, (paidByService.get(id) ?? 0) + 1);
    }
    expect([...paidByService.values()].filter((n) => n > 1)).toEqual([]);
    for (const id of paidByService.keys()) expect([byId.get(id)?.kind, ['paid', 'needs_review'].includes(byId.get(id)?.state ?? '')]).toEqual(['withdrawal', true]);
    const withdrawals = rows.filter((r) => r.kind === 'withdrawal');
    for (const r of withdrawals.filter((w) => w.state === 'paid')) expect([r.id, paidByService.get(r.id)]).toEqual([r.id, 1]);
    const review = withdrawals.filter((r) => r.state === 'needs_review');
    const serviceSats = service.sandbox.payments().reduce((s, p) => s + Number(p.amount) / 1000, 0);
    const paidSats = withdrawals.filter((r) => r.state === 'paid' || (r.state === 'needs_review' && paidByService.has(r.id))).reduce((s, r) => s + r.sats, 0);
    expect(paidSats).toBe(serviceSats);

    // For each player: credits − withdrawn (paid or under way) = the balance the relay answers.
    await start();
    for (const { token, userId } of players) {
      const mine = rows.filter((r) => r.user_id === userId);
      const credits = mine.filter((r) => r.kind === 'credit' && r.state === 'credited').reduce((s, r) => s + r.sats, 0);
      const withdrawn = mine.filter((r) => r.kind === 'withdrawal' && ['paid', 'needs_review', 'held', 'sending'].includes(r.state)).reduce((s, r) => s + r.sats, 0);
      const balance = (await (await fetch(`${base}/v1/balance`, { headers: { authorization: `Bearer ${token}` } })).json()) as { sats: number };
      expect([userId, balance.sats]).toEqual([userId, credits - withdrawn]);
    }

    console.log(
      `chaos in balance mode (${KILLS} SIGKILLs of the relay): ${outcomes.length} requests, faults ${JSON.stringify(Object.fromEntries(service.injected))}; ` +
        `withdrawals ${JSON.stringify(tally(withdrawals.map((r) => r.state)))}, ` +
        `answers ${JSON.stringify(tally(outcomes.filter((o) => o.kind === 'withdrawal').map((o) => o.outcome)))}; ` +
        `${reconcile.stdout.trim()} by the payment-status endpoint; in review ${review.length}, reasons ${JSON.stringify(tally(review.map((r) => r.reason ?? '?')))}`,
    );
  }, 240_000);
});
