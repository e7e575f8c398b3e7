// Several relay processes on one PostgreSQL database, paying one payments service: the same
// promises as one relay, whichever relay each request lands on.

import { type ChildProcess, execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { serve } from '@hono/node-server';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { createSandbox, type Sandbox } from '../../../src/sandbox/index.js';
import { freshDatabase, POSTGRES_HOW } from '../../helpers/postgres.js';
import { relayCommand, startRelayCommand } from '../../helpers/relay-command.js';
import { openSse, readSse } from '../../helpers/sse.js';
import { tally } from '../../helpers/tally.js';

const url = inject('postgresUrl');
const KEY = `multi_${randomUUID()}`;
const SECRET = randomUUID() + randomUUID();

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

interface Fleet {
  sandbox: Sandbox;
  databaseUrl: string;
  urls: string[];
  relays: ChildProcess[];
  start(i: number): Promise<void>;
}

/** A sandbox, a fresh database and `n` relay processes sharing both. */
async function fleet(n: number, env: Record<string, string> = {}): Promise<Fleet> {
  const sandbox = createSandbox({ apiKey: KEY });
  const service = serve({ fetch: sandbox.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise((r) => service.once('listening', r));
  cleanup.push(() => service.close());
  const dir = mkdtempSync(join(tmpdir(), 'rewardbus-fleet-'));
  const catalog = join(dir, 'catalog.json');
  writeFileSync(
    catalog,
    JSON.stringify({
      achievements: [
        { id: 'coin', title: 'Coin', sats: 1, repeat: { kind: 'cooldown', seconds: 0 } },
        { id: 'first-coin', title: 'First coin', sats: 21, repeat: { kind: 'once' } },
      ],
    }),
  );
  const base = {
    PAYMENTS_API_KEY: KEY,
    PAYMENTS_BASE_URL: `http://127.0.0.1:${(service.address() as AddressInfo).port}`,
    RELAY_PUBLIC_URL: 'https://relay.example.com',
    RELAY_DATABASE_URL: await freshDatabase(url),
    RELAY_SECRET: SECRET,
    RELAY_CATALOG: catalog,
    RELAY_RATE_LIMIT_PER_MINUTE: '0',
    ...env,
  };
  const f: Fleet = {
    sandbox,
    databaseUrl: base.RELAY_DATABASE_URL,
    urls: [],
    relays: [],
    async start(i) {
      const { child, url } = await startRelayCommand({ ...base, RELAY_DATA_DIR: join(dir, `relay-${i}`) });
      f.relays[i] = child;
      f.urls[i] = url;
      cleanup.push(() => child.kill('SIGKILL'));
    },
  };
  // They start together: the schema is migrated once, the others wait their turn.
  await Promise.all(Array.from({ length: n }, (_, i) => f.start(i)));
  return f;
}

const link = async (relayUrl: string, gamertag: string) =>
  (await (await fetch(`${relayUrl}/v1/players`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ gamertag }) })).json()) as {
    token: string;
    userId: string;
  };
const claim = (relayUrl: string, token: string, key: string, achievementId = 'coin') =>
  fetch(`${relayUrl}/v1/rewards`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'idempotency-key': key },
    body: JSON.stringify({ achievementId }),
  });

/** A client: the same key, to any relay, until one answers for good. */
function untilFinal(urls: () => string[], token: string, key: string): Promise<string> {
  let attempt = 0;
  return vi.waitFor(
    async () => {
      const relays = urls();
      const r = await claim(relays[attempt++ % relays.length]!, token, key).catch(() => undefined);
      if (r && r.status < 500 && r.status !== 409 && r.status !== 429) {
        const body = (await r.json()) as { status?: string; code?: string };
        if (body.status !== 'pending') return body.status ?? body.code ?? String(r.status);
      }
      throw new Error(`no final answer for ${key} (${r?.status ?? 'unreachable'})`);
    },
    { timeout: 30_000, interval: 50 },
  );
}

describe.skipIf(!url)(url ? 'several relays on one PostgreSQL database' : `several relays on one PostgreSQL database (skipped: ${POSTGRES_HOW})`, () => {
  it('pays one Idempotency-Key sent 50 times at once across three relays exactly once', async () => {
    const f = await fleet(3);
    const { token } = await link(f.urls[0]!, 'alice');
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => claim(f.urls[i % 3]!, token, key, 'first-coin')));
    expect(f.sandbox.payments()).toHaveLength(1);
    const created = answers.filter((a) => a.status === 201 && !a.headers.get('idempotent-replayed'));
    expect(created).toHaveLength(1);
    for (const a of answers) expect([201, 409]).toContain(a.status);
    // A token from relay A is good on relay C: one RELAY_SECRET.
    expect((await claim(f.urls[2]!, token, key, 'first-coin')).headers.get('idempotent-replayed')).toBe('true');
  });

  it('never pays past the daily budget or a player cap under 1,000 concurrent claims across three relays', async () => {
    const f = await fleet(3, { RELAY_DAILY_BUDGET_SATS: '300', RELAY_USER_DAILY_CAP_SATS: '20' });
    const players = await Promise.all(Array.from({ length: 20 }, (_, i) => link(f.urls[i % 3]!, `budget-${i}`)));
    const results = await Promise.all(
      Array.from({ length: 1000 }, async (_, i) => {
        // As the client does: a 503 (the database busy past its bounds) is sent again with the same key.
        const key = randomUUID();
        for (let attempt = 0; ; attempt++) {
          const r = await claim(f.urls[(i + attempt) % 3]!, players[i % 20]!.token, key);
          const body = (await r.json()) as { status?: string; reason?: string };
          if (r.status !== 503 || attempt === 20) return body.reason ?? body.status ?? String(r.status);
          await new Promise((resolve) => setTimeout(resolve, 250)); // the client's backoff, shortened
        }
      }),
    );
    const payments = f.sandbox.payments();
    expect(payments.reduce((s, p) => s + Number(p.amount) / 1000, 0)).toBe(300);
    const perPlayer = new Map<string, number>();
    for (const p of payments) perPlayer.set(p.receiverId, (perPlayer.get(p.receiverId) ?? 0) + 1);
    expect(Math.max(...perPlayer.values())).toBeLessThanOrEqual(20);
    console.log(JSON.stringify(tally(results)));
    expect(results.filter((r) => r === 'daily_budget' || r === 'user_daily_cap')).toHaveLength(700);
  });

  it('keeps paying when one relay is killed mid-load; its payments in flight are recovered after their lease, none twice', async () => {
    const f = await fleet(3, { PAYMENTS_TIMEOUT_MS: '1000', RELAY_PAYMENT_LEASE_MS: '2500' });
    const players = await Promise.all(Array.from({ length: 10 }, (_, i) => link(f.urls[0]!, `load-${i}`)));
    let alive = [0, 1, 2];
    const keys: string[] = [];
    const outcomes: string[] = [];
    const load = players.map(async (p, i) => {
      for (let n = 0; n < 30; n++) {
        const key = randomUUID();
        keys.push(key);
        outcomes.push(await untilFinal(() => alive.map((a) => f.urls[a]!), p.token, key));
        if (i === 0 && n === 5) {
          f.relays[1]!.kill('SIGKILL');
          alive = [0, 2];
        }
      }
    });
    await Promise.all(load);
    // What relay 1 left sending is recovered by the others once its lease ran out.
    const { default: pg } = await import('pg');
    const db = new pg.Client({ connectionString: f.databaseUrl });
    await db.connect();
    const states = async () => (await db.query<{ state: string; n: string }>('SELECT state, count(*) AS n FROM rewards GROUP BY state')).rows;
    try {
      await expect.poll(async () => (await states()).filter((s) => s.state === 'sending' || s.state === 'deferred'), { timeout: 15_000, interval: 100 }).toEqual([]);
    } finally {
      await db.end().catch(() => undefined);
    }
    expect(keys).toHaveLength(300);
    expect(outcomes.filter((o) => !['paid', 'needs_review', 'failed', 'rejected'].includes(o))).toEqual([]);
    const byDescription = new Map<string, number>();
    for (const p of f.sandbox.payments()) byDescription.set(p.comment, (byDescription.get(p.comment) ?? 0) + 1);
    expect([...byDescription.values()].filter((n) => n > 1)).toEqual([]);
    expect(outcomes.filter((o) => o === 'paid').length).toBeGreaterThan(250);
    console.log(`relay killed mid-load: ${keys.length} intents`);
  });

  it('runs the operator commands against the shared ledger', async () => {
    const f = await fleet(1, { PAYMENTS_TIMEOUT_MS: '200' });
    // The service answers limbo's payment after 30 s: past the relay's timeout.
    const { token } = await link(f.urls[0]!, 'limbo');
    const r = (await (await claim(f.urls[0]!, token, randomUUID(), 'first-coin')).json()) as { id: string; status: string };
    expect(r.status).toBe('needs_review');
    const env = { ...process.env, RELAY_DATABASE_URL: f.databaseUrl, RELAY_SECRET: SECRET, RELAY_DATA_DIR: mkdtempSync(join(tmpdir(), 'rewardbus-review-')) };
    const review = (...args: string[]) => promisify(execFile)(process.execPath, relayCommand('review', ...args), { env });
    expect((await review('list')).stdout).toContain(r.id);
    expect((await review('mark-failed', r.id)).stdout).toContain('failed');
    expect((await review('list')).stdout).toContain('Nothing to review');
  });

  it('tells a player streaming from relay A about a payout made by relay B, and resumes across relays', async () => {
    const f = await fleet(3);
    const player = await link(f.urls[0]!, 'streamer');
    // From Last-Event-ID 0: the payout is heard even if it lands before the stream is open.
    const live = await openSse(f.urls[0]!, player.token);
    expect((await claim(f.urls[1]!, player.token, randomUUID(), 'first-coin')).status).toBe(201);
    const event = await live.until((m) => m.event === 'reward', 10_000).finally(() => live.close());
    expect(event).toMatchObject({ event: 'reward', data: { achievementId: 'first-coin', status: 'paid' } });
    const resumed = await readSse(f.urls[2]!, player.token, 1, '0', 5000);
    expect(resumed.map((e) => e.id)).toEqual([event!.id]);
  });
});
