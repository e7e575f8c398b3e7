// PostgreSQL as studios run it (issue 35): Debian's PgBouncer in transaction mode, with stock
// settings but for what one must set (listen port, authentication, pool_mode, the database line),
// in front of the tests' PostgreSQL; two live-mode relay processes on it, paying the standalone
// sandbox, their listen connection (RELAY_DATABASE_LISTEN_URL) straight to PostgreSQL.
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig, openConfiguredStore, openPgStore, type RelayStore } from '../../src/relay/index.js';
import { inTransaction } from '../../src/relay/store/postgres/transaction.js';
import { PGBOUNCER, PGBOUNCER_HOW, startPgBouncer, type TestPgBouncer } from '../helpers/pgbouncer.js';
import { freshDatabase, POSTGRES_HOW } from '../helpers/postgres.js';
import { freePort, startChild, stop } from '../helpers/processes.js';
import { relayCommand, startRelayCommand } from '../helpers/relay-command.js';
import { openSse } from '../helpers/sse.js';
import { tally } from '../helpers/tally.js';

const postgresUrl = inject('postgresUrl');
if (!PGBOUNCER && process.env.CI === 'true') throw new Error(`CI=true: ${PGBOUNCER_HOW}`);

const SANDBOX_KEY = `pooler_${randomUUID()}`;
const SECRET = randomUUID() + randomUUID();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const dirs: string[] = [];
const children: ChildProcess[] = [];
const closing: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  await Promise.all(children.map(stop));
  for (const c of closing.reverse()) await c().catch(() => undefined);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const tempDir = (name: string) => {
  const d = mkdtempSync(join(tmpdir(), `rewardbus-${name}-`));
  dirs.push(d);
  return d;
};

/** A query on a connection of its own, straight to PostgreSQL (or through the pooler). */
async function query<R extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<R>(text, values)).rows;
  } finally {
    await c.end();
  }
}

/** Advisory locks held on a database, by anyone (a migration lock left held on a pooled server connection shows here). */
const advisoryLocks = async (directUrl: string) =>
  Number(
    (
      await query<{ n: string }>(
        directUrl,
        "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
      )
    )[0]!.n,
  );

async function link(url: string, gamertag: string): Promise<{ token: string; userId: string }> {
  const r = await fetch(`${url}/v1/players`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ gamertag }) });
  if (r.status !== 201) throw new Error(`link ${gamertag}: ${r.status} ${await r.text()}`);
  return (await r.json()) as { token: string; userId: string };
}
const claim = (url: string, token: string, key = randomUUID()) =>
  fetch(`${url}/v1/rewards`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'idempotency-key': key },
    body: '{"achievementId":"coin"}',
  });

async function sandboxPaidIds(sandboxUrl: string): Promise<string[]> {
  const { payments } = (await (await fetch(`${sandboxUrl}/_sandbox/payments`)).json()) as { payments: Array<{ comment: string }> };
  return payments.map((p) => /\(rewardbus ([^)]+)\)/.exec(p.comment)?.[1]).filter((id): id is string => id !== undefined);
}

const describePooler = !PGBOUNCER
  ? (name: string, _fn: () => void) => describe.skip(`${name} (skipped: ${PGBOUNCER_HOW})`, () => it('runs relays behind PgBouncer', () => undefined))
  : !postgresUrl
    ? (name: string, _fn: () => void) => describe.skip(`${name} (skipped: ${POSTGRES_HOW})`, () => it('runs relays behind PgBouncer', () => undefined))
    : (name: string, fn: () => void) => describe(name, { timeout: 60_000 }, fn);

describePooler('two relays behind PgBouncer in transaction mode (stock settings), the listen URL direct', () => {
  let bouncer: TestPgBouncer;
  let direct: string;
  let pooled: string;
  let sandboxUrl: string;
  let relays: Array<{ url: string; logs: () => string }>;

  beforeAll(async () => {
    bouncer = await startPgBouncer(postgresUrl, 'transaction');
    closing.push(() => bouncer.stop());
    const sandbox = await startChild(relayCommand('sandbox', '0'), { SANDBOX_API_KEY: SANDBOX_KEY }, /sandbox on (http:\/\/\S+)/);
    children.push(sandbox.child);
    sandboxUrl = sandbox.match[1]!;
    direct = await freshDatabase(postgresUrl);
    pooled = bouncer.through(direct);
    const dir = tempDir('pooler');
    const catalog = join(dir, 'catalog.json');
    writeFileSync(catalog, JSON.stringify({ achievements: [{ id: 'coin', title: 'Coin', sats: 1, repeat: { kind: 'cooldown', seconds: 0 } }] }));
    const port = await freePort();
    // Started together, on an empty database: one migrates, the other waits its turn.
    relays = await Promise.all(
      [0, 1].map(async (i) => {
        const relay = await startRelayCommand({
          PAYMENTS_API_KEY: SANDBOX_KEY,
          PAYMENTS_BASE_URL: sandboxUrl,
          RELAY_PUBLIC_URL: `http://127.0.0.1:${port}`,
          WEBHOOK_SECRET: randomUUID(),
          RELAY_DATABASE_URL: pooled,
          RELAY_DATABASE_LISTEN_URL: direct,
          RELAY_SECRET: SECRET,
          RELAY_CATALOG: catalog,
          RELAY_DATA_DIR: join(dir, `relay-${i}`),
          RELAY_USER_DAILY_CAP_SATS: '0',
          RELAY_DAILY_BUDGET_SATS: '0',
          RELAY_RATE_LIMIT_PER_MINUTE: '0',
        });
        children.push(relay.child);
        let logs = '';
        relay.child.stdout!.on('data', (d: Buffer) => void (logs += d.toString()));
        return { url: relay.url, logs: () => logs };
      }),
    );
  }, 60_000);

  it('starts both relays, leaving no advisory lock held; the bounds read back through the pooler are the documented ones', async () => {
    for (const relay of relays) expect(await (await fetch(`${relay.url}/v1/ready`)).json()).toEqual({ ok: true, store: 'ok', service: 'ok' });
    await expect.poll(() => advisoryLocks(direct), { timeout: 5_000 }).toBe(0);
    // Each listener, on the direct connection, heard its own test notice sent through the pooler.
    for (const relay of relays) await expect.poll(() => relay.logs(), { timeout: 5_000 }).toContain('"event":"listener_heard"');
    for (const relay of relays) expect(relay.logs()).not.toContain('listener_unheard');
    // A transaction as the relay begins one, through the pooler: no session carries the bounds.
    const pool = new pg.Pool({ connectionString: pooled, max: 2 });
    try {
      const shown = await inTransaction(
        pool,
        async (c) =>
          (
            await c.query('SELECT current_setting($1) AS l, current_setting($2) AS s, current_setting($3) AS i', [
              'lock_timeout',
              'statement_timeout',
              'idle_in_transaction_session_timeout',
            ])
          ).rows[0],
      );
      expect(shown).toEqual({ l: '5s', s: '10s', i: '30s' });
      // And none left behind on the pooled server connection for the next client.
      expect((await pool.query('SHOW lock_timeout')).rows[0]).toEqual({ lock_timeout: '0' });
    } finally {
      await pool.end();
    }
    const functions = await query<{ proname: string; proconfig: string[] }>(
      pooled,
      "SELECT proname, proconfig FROM pg_proc WHERE proname LIKE 'rewardbus\\_%' AND prosrc ~ '\\m(lock|FOR UPDATE|INSERT|UPDATE)' ORDER BY proname",
    );
    expect(functions.map((f) => f.proname)).toEqual(expect.arrayContaining(['rewardbus_apply', 'rewardbus_claim_facts', 'rewardbus_claim_facts_many']));
    for (const f of functions) expect(f.proconfig, f.proname).toEqual(expect.arrayContaining(['jit=off', 'lock_timeout=5s']));
    expect(bouncer.log()).not.toMatch(/unsupported startup parameter/);
  });

  it('pays 400 claims split between the relays, each once, with no HTTP 500', async () => {
    const players = await Promise.all(Array.from({ length: 20 }, (_, i) => link(relays[i % 2]!.url, `pooled-${i}`)));
    const statuses: number[] = [];
    const ids: string[] = [];
    const started = Date.now();
    await Promise.all(
      players.map(async (p, i) => {
        for (let n = 0; n < 20; n++) {
          // As a client does: the same key again after a 409 or 503, until the answer stands.
          const key = randomUUID();
          for (let attempt = 0; ; attempt++) {
            const r = await claim(relays[(i + n + attempt) % 2]!.url, p.token, key);
            statuses.push(r.status);
            if (r.status === 201) {
              const body = (await r.json()) as { id: string; status: string };
              if (body.status !== 'pending') {
                ids.push(`${body.id}:${body.status}`);
                break;
              }
            } else await r.body?.cancel();
            if (attempt > 50) throw new Error(`no answer for ${key}: ${statuses.slice(-5)}`);
            await sleep(50);
          }
        }
      }),
    );
    console.log(`400 claims through PgBouncer in ${Date.now() - started} ms; answers ${JSON.stringify(tally(statuses.map(String)))}`);
    expect(statuses.filter((s) => s >= 500 && s !== 503)).toEqual([]);
    expect(ids).toHaveLength(400);
    expect(ids.every((x) => x.endsWith(':paid'))).toBe(true);
    const paid = (await sandboxPaidIds(sandboxUrl)).filter((id) => ids.includes(`${id}:paid`));
    expect(paid).toHaveLength(400);
    expect(new Set(paid).size).toBe(400);
  });

  it('pays one Idempotency-Key sent 20 times at once across both relays exactly once', async () => {
    const { token } = await link(relays[0]!.url, 'twenty-times');
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => claim(relays[i % 2]!.url, token, key)));
    const statuses = answers.map((a) => a.status);
    for (const s of statuses) expect([201, 409]).toContain(s);
    const bodies = await Promise.all(answers.filter((a) => a.status === 201).map((a) => a.json() as Promise<{ id: string }>));
    expect(new Set(bodies.map((b) => b.id)).size).toBe(1);
    const paid = (await sandboxPaidIds(sandboxUrl)).filter((id) => id === bodies[0]!.id);
    expect(paid).toHaveLength(1);
  });

  it('every stream hears payouts made on either relay (notices sent through the pooler, heard on the direct listen connection)', async () => {
    const { token } = await link(relays[0]!.url, 'listener');
    const streams = await Promise.all(relays.map((r) => openSse(r.url, token)));
    try {
      for (const relay of [relays[0]!, relays[1]!, relays[1]!, relays[0]!]) {
        const reward = (await (await claim(relay.url, token)).json()) as { id: string; status: string };
        expect(reward.status).toBe('paid');
        for (const s of streams) await s.until((m) => (m.data as { id?: string }).id === reward.id && (m.data as { status?: string }).status === 'paid', 5_000);
      }
    } finally {
      await Promise.all(streams.map((s) => s.close()));
    }
  });

  it('answers a claim blocked on a held lock in about 5 s (lock_timeout through the pooler), not the 12 s of the relay itself', async () => {
    const { token, userId } = await link(relays[0]!.url, 'blocked');
    const holder = new pg.Client({ connectionString: direct });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`u:${userId}`]);
      const started = Date.now();
      const r = await claim(relays[1]!.url, token);
      const took = Date.now() - started;
      console.log(`a claim blocked on its player's lock answered ${r.status} in ${took} ms`);
      expect(r.status).toBe(503);
      expect(took).toBeGreaterThanOrEqual(4_500);
      expect(took).toBeLessThan(9_000);
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
    }
  });

  it('migrates safely when two relays start at the same moment: 10 trials, each clean, no lock left held (half with migrations through the pooler)', async () => {
    for (let trial = 0; trial < 10; trial++) {
      const db = await freshDatabase(postgresUrl);
      // Through the pooler: no listen URL, so the migrations go through PgBouncer in transaction mode too.
      const env = { RELAY_DATABASE_URL: bouncer.through(db), RELAY_SECRET: SECRET, ...(trial % 2 ? { RELAY_DATABASE_LISTEN_URL: db } : {}) };
      const opened = await Promise.allSettled([0, 1].map(() => openConfiguredStore(loadConfig({ ...env, RELAY_DATA_DIR: tempDir('trial') }))));
      const stores = opened.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
      try {
        expect(
          opened.map((o) => (o.status === 'rejected' ? String(o.reason) : 'ok')),
          `trial ${trial}`,
        ).toEqual(['ok', 'ok']);
        const versions = await query<{ version: number }>(db, 'SELECT version FROM rewardbus_migrations ORDER BY version');
        expect(versions.map((v) => v.version)).toEqual(Array.from({ length: versions.length }, (_, i) => i + 1));
        expect(await advisoryLocks(db), `trial ${trial}: an advisory lock left held`).toBe(0);
      } finally {
        await Promise.all(stores.map((s) => s.close()));
      }
    }
  });

  it('prunes past days through the pooler, two relays at once, leaving no lock held on a pooled server connection', async () => {
    const db = await freshDatabase(postgresUrl);
    const stores = await Promise.all(['a', 'b'].map((owner) => openPgStore(bouncer.through(db), { owner, leaseMs: 60_000, listenUrl: db })));
    try {
      await query(db, "INSERT INTO address_links (address, day, user_id) SELECT 'addr-' || i, '2020-01-01', 'u' FROM generate_series(1, 50) i");
      for (let round = 0; round < 5; round++) {
        const pruned = await Promise.all(stores.map((s) => s.ledger.prune!('2026-01-01', 0, 0)));
        expect(await advisoryLocks(db), `round ${round}`).toBe(0);
        if (round === 0) expect(pruned[0]! + pruned[1]!).toBe(50);
      }
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  it('names the pooler, not the password, when it refuses a startup parameter; names RELAY_DATABASE_LISTEN_URL when that one is out of reach', async () => {
    const db = await freshDatabase(postgresUrl);
    const open = (env: Record<string, string>) => openConfiguredStore(loadConfig({ RELAY_SECRET: SECRET, RELAY_DATA_DIR: tempDir('refused'), ...env }));
    const refused = await open({ RELAY_DATABASE_URL: `${bouncer.through(db)}?options=-c%20statement_timeout%3D1000`, RELAY_DATABASE_LISTEN_URL: db }).catch(
      (e: Error & { setting?: string }) => e,
    );
    expect(refused).toMatchObject({ setting: 'RELAY_DATABASE_URL' });
    expect((refused as Error).message).toMatch(/connection pooler at .* refused a startup parameter \(unsupported startup parameter: options\)/);
    expect((refused as Error).message).not.toContain(bouncer.password);
    expect((refused as Error).message).not.toMatch(/password\./);
    const unreachable = await open({
      RELAY_DATABASE_URL: bouncer.through(db),
      RELAY_DATABASE_LISTEN_URL: `postgres://rewardbus:hunter22@127.0.0.1:${await freePort()}/${new URL(db).pathname.slice(1)}`,
    }).catch((e: Error & { setting?: string }) => e);
    expect(unreachable).toMatchObject({
      setting: 'RELAY_DATABASE_LISTEN_URL',
      message: expect.stringMatching(/^RELAY_DATABASE_LISTEN_URL: cannot open the listen connection .*ECONNREFUSED/),
    });
    expect((unreachable as Error).message).not.toContain('hunter22');
  });

  it('says so in its log when its listen connection goes through the transaction pooler, where no notice reaches it', async () => {
    const db = await freshDatabase(postgresUrl);
    const said: string[] = [];
    const logger = { warn: (f: object) => void said.push((f as { event: string }).event), info: (f: object) => void said.push((f as { event: string }).event) };
    let store: RelayStore | undefined;
    try {
      store = await openPgStore(bouncer.through(db), { owner: 'probe', leaseMs: 60_000, logger });
      const unsubscribe = await store.events.subscribe!(() => undefined);
      await expect.poll(() => said, { timeout: 6_000 }).toContain('listener_unheard');
      await unsubscribe();
      // With the listen URL direct, the same probe is heard.
      said.length = 0;
      const heard = await openPgStore(bouncer.through(db), { owner: 'probe-direct', leaseMs: 60_000, logger, listenUrl: db });
      const off = await heard.events.subscribe!(() => undefined);
      await expect.poll(() => said, { timeout: 6_000 }).toContain('listener_heard');
      await off();
      await heard.close();
      expect(said).toEqual(['listener_heard']);
    } finally {
      await store?.close();
    }
  });
});
