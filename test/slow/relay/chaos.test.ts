// The chaos run: the payments service behind a proxy that injects faults into a fifth of the
// calls, 1,000 intents from 20 players retried with their own keys, the relay killed with
// SIGKILL five times and restarted on the same ledger (or, in its database mode, its PostgreSQL
// restarted and frozen under it), then reconciled. Nothing may be paid
// twice, nothing lost, and every sat the service paid is accounted for in the ledger.

import type { ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { faultyService, untilFinal } from '../../helpers/faulty-service.js';
import { freshDatabase, POSTGRES_HOW, postgresInstalled, startPostgres } from '../../helpers/postgres.js';
import { freePort } from '../../helpers/processes.js';
import { relayCommand, startRelayCommand } from '../../helpers/relay-command.js';
import { seededRandom } from '../../helpers/seeded-random.js';
import { tally } from '../../helpers/tally.js';

const KEY = `chaos_${randomUUID()}`;
const TIMEOUT_MS = 400;
const PLAYERS = 20;
const INTENTS_PER_PLAYER = 50;
const KILLS = 5;

// The chaos's own timing (a late answer, a client's pauses between retries, the time between kills): never a wait for a condition.
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const closers: Array<() => unknown> = [];
afterAll(() => closers.forEach((c) => c()));

type Row = { id: string; idempotency_key: string; state: string; sats: number; payment_id: string | null; reason: string | null };

/**
 * `relay`: the relay is killed with SIGKILL five times (SQLite). `database`: its PostgreSQL is
 * restarted four times and frozen (SIGSTOP) once for a second, under the same load, while the
 * relay runs on.
 */
async function chaos(mode: 'relay' | 'database') {
  {
    const rnd = seededRandom(42);
    const postgres = mode === 'database' ? await startPostgres() : undefined;
    if (mode === 'database' && !postgres) throw new Error(POSTGRES_HOW);
    if (postgres) closers.push(() => postgres.stop());
    const databaseUrl = postgres && (await freshDatabase(postgres.url));
    const service = await faultyService(rnd, KEY, TIMEOUT_MS);
    closers.push(service.close);
    const dataDir = mkdtempSync(join(tmpdir(), 'rewardbus-chaos-'));
    const catalog = join(dataDir, 'catalog.json');
    writeFileSync(catalog, JSON.stringify({ achievements: [{ id: 'chaos', title: 'Chaos', sats: 1, repeat: { kind: 'cooldown', seconds: 0 } }] }));
    // A fixed port: the clients keep it across the relay's restarts.
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
      RELAY_USER_DAILY_CAP_SATS: '0',
      RELAY_DAILY_BUDGET_SATS: '0',
      RELAY_RATE_LIMIT_PER_MINUTE: '0',
      ...(databaseUrl ? { RELAY_DATABASE_URL: databaseUrl, RELAY_SECRET: `${KEY}${KEY}` } : {}),
    };
    let relay: ChildProcess | undefined;
    const start = async () => {
      relay = (await startRelayCommand(env)).child;
    };
    closers.push(() => relay?.kill('SIGKILL'));
    await start();
    const base = `http://127.0.0.1:${port}`;

    const tokens = await Promise.all(
      Array.from({ length: PLAYERS }, (_, i) =>
        untilFinal(
          () => fetch(`${base}/v1/players`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ gamertag: `chaos-${i}` }) }),
          async (r) => (r.status === 201 ? ((await r.json()) as { token: string }).token : undefined),
        ),
      ),
    );

    const keys: string[] = [];
    const outcomes = new Map<string, string>();
    const claims = tokens.map(async (token) => {
      for (let n = 0; n < INTENTS_PER_PLAYER; n++) {
        const key = randomUUID();
        keys.push(key);
        const status = await untilFinal(
          () =>
            fetch(`${base}/v1/rewards`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'idempotency-key': key },
              body: JSON.stringify({ achievementId: 'chaos' }),
              signal: AbortSignal.timeout(10_000),
            }),
          async (r) => {
            if (r.status >= 500 || r.status === 409 || r.status === 429) return undefined;
            const body = (await r.json()) as { status?: string; code?: string };
            return body.status === 'pending' ? undefined : (body.status ?? `http_${r.status}_${body.code}`);
          },
        );
        outcomes.set(key, status);
      }
    });
    const killer = (async () => {
      for (let k = 0; k < KILLS; k++) {
        await sleep(400 + rnd() * 800);
        if (postgres) {
          // The database fails instead: restarted, and once frozen for a second.
          if (k === 2) {
            await postgres.freeze();
            await sleep(1000);
            await postgres.thaw();
          } else await postgres.restart();
          continue;
        }
        const dying = relay!;
        const exited = new Promise((r) => dying.once('exit', r));
        dying.kill('SIGKILL');
        await exited;
        await start();
      }
    })();
    await Promise.all([...claims, killer]);
    relay!.kill('SIGTERM');
    await new Promise((r) => relay!.once('exit', r));

    // The operator reconciles what has a transaction id, through the payment-status endpoint.
    const reconcile = await promisify(execFile)(process.execPath, relayCommand('review', 'reconcile'), {
      env: { ...env, PAYMENTS_BASE_URL: service.directUrl },
    });

    const rows = await ledgerRows(dataDir, databaseUrl);
    const byKey = new Map(rows.map((r) => [r.idempotency_key, r]));
    const byId = new Map(rows.map((r) => [r.id, r]));
    const paidByService = new Map<string, number>();
    for (const p of service.sandbox.payments()) {
      const id = /rewardbus ([0-9a-f-]{36})/.exec(p.comment)?.[1] ?? 'unknown';
      paidByService.set(id, (paidByService.get(id) ?? 0) + 1);
    }

    // 0 intents paid twice, and every payment is one of the ledger's.
    expect([...paidByService.values()].filter((n) => n > 1)).toEqual([]);
    for (const id of paidByService.keys()) expect(['paid', 'needs_review']).toContain(byId.get(id)?.state);
    // 0 intents without a final record.
    expect(keys).toHaveLength(PLAYERS * INTENTS_PER_PLAYER);
    const unfinished = keys.filter((k) => !['paid', 'failed', 'rejected', 'needs_review'].includes(byKey.get(k)?.state ?? 'missing'));
    expect(unfinished).toEqual([]);
    // What the ledger says was paid, the service paid; what it paid beyond that waits in review.
    const ledgerPaid = rows.filter((r) => r.state === 'paid');
    for (const r of ledgerPaid) expect([r.id, paidByService.get(r.id)]).toEqual([r.id, 1]);
    const review = rows.filter((r) => r.state === 'needs_review');
    const reviewPaid = review.filter((r) => paidByService.has(r.id));
    const serviceSats = service.sandbox.payments().reduce((s, p) => s + Number(p.amount) / 1000, 0);
    expect(ledgerPaid.reduce((s, r) => s + r.sats, 0) + reviewPaid.reduce((s, r) => s + r.sats, 0)).toBe(serviceSats);

    const states = Object.fromEntries(['paid', 'failed', 'rejected', 'needs_review'].map((s) => [s, rows.filter((r) => r.state === s).length]));
    console.log(
      `chaos (${mode === 'relay' ? `${KILLS} SIGKILLs of the relay` : 'PostgreSQL restarted 4 times and frozen once'}): ${keys.length} intents, ` +
        `faults ${JSON.stringify(Object.fromEntries(service.injected))}; ledger ${JSON.stringify(states)}; ` +
        `${reconcile.stdout.trim()} by the payment-status endpoint; in review ${review.length}, of which the service had paid ${reviewPaid.length}; ` +
        `reasons ${JSON.stringify(tally(review.map((r) => r.reason ?? '?')))}`,
    );
  }
}

/** Every intent the ledger holds, from the SQLite file or the PostgreSQL database. */
async function ledgerRows(dataDir: string, databaseUrl: string | undefined): Promise<Row[]> {
  const sql = 'SELECT id, idempotency_key, state, sats, payment_id, reason FROM rewards';
  if (!databaseUrl) {
    const db = new Database(join(dataDir, 'ledger.sqlite'), { readonly: true });
    const rows = db.prepare(sql).all() as Row[];
    db.close();
    return rows;
  }
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    return (await db.query<Row>(sql)).rows;
  } finally {
    await db.end();
  }
}

describe('the chaos run', () => {
  it('pays no intent twice, loses none, and accounts for every sat the service paid (relay killed)', () => chaos('relay'), 240_000);
  it.skipIf(!postgresInstalled())('does the same while its PostgreSQL is restarted and frozen under it', () => chaos('database'), 240_000);
});
