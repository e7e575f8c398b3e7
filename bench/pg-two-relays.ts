// Two PostgreSQL relays against one, and what the database's connections wait on meanwhile (issue
// 39, aim 6): is a shortfall of two relays contention (advisory locks, the day's budget row) or the
// machine? Each round: one relay at 64 connections; two relays at 32 each over the same 64 players
// (as bench/relay-load.ts's "2 relays (PostgreSQL)"), then over disjoint players (no player's lock
// wanted by both); one relay over 32 players. In the last round pg_stat_activity is sampled every
// 50 ms (with each waiting connection's ungranted lock types) and pg_stat_statements read.
// Run alone: node --import tsx bench/pg-two-relays.ts. BENCH_BUDGET_SATS sets a daily budget (the
// relay-load bench sets none, so no claim there touches the budget row); BENCH_SECONDS, BENCH_ROUNDS.
// Each round also prints the CPU per reward of the relays and of PostgreSQL (from /proc, the
// measured seconds only): on a host this busy a rate swings several-fold from minute to minute,
// the CPU a reward costs far less, and two relays' share of one is what that CPU allows.
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { freshDatabase, startPostgres } from '../test/helpers/postgres.js';
import { startChild, startRelayProcess, stop } from '../test/helpers/processes.js';
import { cpuSeconds, postmasterPid, serverSeconds } from './cpu.js';
import { resetStatements, STATEMENTS_SETTINGS, statementProfile } from './pg-statements.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const KEY = 'bench-sandbox-key';
const postgres = (await startPostgres(STATEMENTS_SETTINGS))!;
const children: ChildProcess[] = [];
const dir = mkdtempSync(join(tmpdir(), 'rewardbus-two-relays-'));
process.on('SIGTERM', async () => {
  await Promise.all(children.map(stop));
  await postgres.stop();
  process.exit(1);
});
try {
  const sandbox = await startChild(['src/bin/rewardbus.ts', 'sandbox', '0'], { SANDBOX_API_KEY: KEY }, /sandbox on (http:\/\/\S+)/);
  children.push(sandbox.child);
  const catalog = join(dir, 'catalog.json');
  writeFileSync(catalog, JSON.stringify({ achievements: [{ id: 'bench', title: 'Bench', sats: 1, repeat: { kind: 'cooldown', seconds: 0 } }] }));
  const secret = randomUUID() + randomUUID();
  const db = await freshDatabase(postgres.url);
  const env = (name: string) => ({
    PAYMENTS_API_KEY: KEY,
    PAYMENTS_BASE_URL: sandbox.match[1]!,
    RELAY_PUBLIC_URL: 'http://127.0.0.1',
    RELAY_DATA_DIR: join(dir, name),
    RELAY_SECRET: secret,
    RELAY_CATALOG: catalog,
    RELAY_USER_DAILY_CAP_SATS: '0',
    RELAY_DAILY_BUDGET_SATS: process.env.BENCH_BUDGET_SATS ?? '0',
    RELAY_RATE_LIMIT_PER_MINUTE: '0',
    RELAY_DATABASE_URL: db,
    PGAPPNAME: `bench-${name}`,
  });
  const one = await startRelayProcess(env('relay-1'));
  children.push(one.child);
  const two = await startRelayProcess(env('relay-2'));
  children.push(two.child);
  const tokens = await Promise.all(
    Array.from({ length: 128 }, async (_, i) => {
      const r = await fetch(`${one.url}/v1/players`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ gamertag: `bench${i}` }) });
      return ((await r.json()) as { token: string }).token;
    }),
  );
  const postmaster = await postmasterPid(postgres.url);
  /** CPU seconds so far of the relays and of the database; `from` when each load's measured seconds began. */
  const meter = () => ({ relays: cpuSeconds(one.child.pid) + cpuSeconds(two.child.pid), database: serverSeconds(postmaster) });
  let measured = 0;
  const run = async (url: string, ts: string[], connections: number, warm: number) => {
    let n = 0;
    const opts = {
      url: `${url}/v1/rewards`,
      method: 'POST' as const,
      connections,
      body: '{"achievementId":"bench"}',
      setupClient: (client: { setHeaders(h: Record<string, string>): void; on(e: string, f: () => void): void }) => {
        const next = () => client.setHeaders({ 'content-type': 'application/json', authorization: `Bearer ${ts[n++ % ts.length]}`, 'idempotency-key': randomUUID() });
        next();
        client.on('response', next);
      },
    };
    if (warm) await autocannon({ ...opts, duration: warm });
    const r = await autocannon({ ...opts, duration: SECONDS });
    measured += r.requests.total;
    if (r.non2xx || r.errors || r.timeouts) console.log(`   (${url}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts)`);
    console.log(`   ${url} ${connections} conns: ${r.requests.average} rps p50 ${r.latency.p50} p99 ${r.latency.p99}`);
    return r.requests.average;
  };
  // What the connections wait on, sampled every 50 ms during a load.
  const sample = () => {
    const counts = new Map<string, number>();
    let on = true;
    const loop = (async () => {
      const c = new pg.Client({ connectionString: db });
      await c.connect();
      while (on) {
        const { rows } = await c.query<{ what: string; n: number }>(
          `SELECT coalesce(a.state, '?') || ' / ' || coalesce(a.wait_event_type || ':' || a.wait_event, 'cpu') ||
             coalesce(' [' || (SELECT string_agg(DISTINCT l.locktype, ',') FROM pg_locks l WHERE l.pid = a.pid AND NOT l.granted) || ']', '') AS what, count(*)::int AS n
           FROM pg_stat_activity a WHERE a.datname = current_database() AND a.pid <> pg_backend_pid() AND a.application_name LIKE 'bench-%' GROUP BY 1`,
        );
        for (const r of rows) counts.set(r.what, (counts.get(r.what) ?? 0) + r.n);
        counts.set('#samples', (counts.get('#samples') ?? 0) + 1);
        await new Promise((r) => setTimeout(r, 50));
      }
      await c.end();
    })();
    return async () => {
      on = false;
      await loop;
      return counts;
    };
  };
  const scen: Record<string, (w: number) => Promise<number>> = {
    one: (w) => run(one.url, tokens.slice(0, 64), 64, w),
    twoShared: async (w) => (await Promise.all([run(one.url, tokens.slice(0, 64), 32, w), run(two.url, tokens.slice(0, 64), 32, w)])).reduce((a, b) => a + b),
    twoDisjoint: async (w) => (await Promise.all([run(one.url, tokens.slice(0, 32), 32, w), run(two.url, tokens.slice(32, 64), 32, w)])).reduce((a, b) => a + b),
    oneDisjoint32: (w) => run(one.url, tokens.slice(0, 32), 64, w),
  };
  const results: Record<string, number[]> = {};
  const cpu: Record<string, Array<{ relays: number; database: number }>> = {};
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, f] of Object.entries(scen)) {
      const last = r === ROUNDS - 1;
      if (last) await resetStatements(db);
      const stopSample = last ? sample() : undefined;
      const warm = r === 0 ? 3 : 1;
      measured = 0;
      let before: ReturnType<typeof meter> | undefined;
      const started = setTimeout(() => (before = meter()), warm * 1000);
      const rps = await f(warm);
      clearTimeout(started);
      const after = meter();
      (results[name] ??= []).push(rps);
      if (before) {
        const per = (k: 'relays' | 'database') => ((after[k] - before![k]) * 1e6) / measured;
        (cpu[name] ??= []).push({ relays: per('relays'), database: per('database') });
        console.log(`   CPU per reward: relays ${per('relays').toFixed(0)} µs, PostgreSQL ${per('database').toFixed(0)} µs`);
      }
      if (stopSample) {
        const counts = await stopSample();
        const samples = counts.get('#samples') ?? 1;
        console.log(`-- ${name}: connections per sample, by what they do (${samples} samples)`);
        for (const [k, v] of [...counts].sort((a, b) => b[1] - a[1])) if (k !== '#samples') console.log(`   ${(v / samples).toFixed(2).padStart(6)}  ${k}`);
        for (const s of await statementProfile(db, 10)) console.log(`   ${String(s.calls).padStart(7)} calls ${s.execMs.toFixed(2).padStart(7)} ms  ${s.statement}`);
      }
      console.log(`round ${r} ${name.padEnd(14)} ${rps.toFixed(0)} rps  (load ${loadavg()[0]!.toFixed(1)})`);
    }
    const o = results.one!.at(-1)!;
    console.log(`  ratios: twoShared/one ${((100 * results.twoShared!.at(-1)!) / o).toFixed(0)}%  twoDisjoint/one ${((100 * results.twoDisjoint!.at(-1)!) / o).toFixed(0)}%`);
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  for (const [k, v] of Object.entries(results)) console.log(`${k.padEnd(14)} median ${med(v).toFixed(0)}  rounds ${v.map((x) => x.toFixed(0)).join(' ')}`);
  // What the CPU allows: a rate is bounded by the CPU per reward of every process sharing the
  // cores, so two relays' share of one, at equal load generator and service, is at most one's
  // relays + database CPU over two's.
  const total = (k: string) => (cpu[k] ?? []).map((c) => c.relays + c.database);
  for (const [k, v] of Object.entries(cpu))
    console.log(`${k.padEnd(14)} CPU µs/reward median: relays ${med(v.map((c) => c.relays)).toFixed(0)}, PostgreSQL ${med(v.map((c) => c.database)).toFixed(0)}`);
  if (total('one').length && total('twoShared').length)
    console.log(`relays + PostgreSQL CPU per reward, one / twoShared: ${((100 * med(total('one'))) / med(total('twoShared'))).toFixed(0)}% (what the CPU lets two make of one)`);
} finally {
  await Promise.all(children.map(stop));
  await postgres.stop();
  rmSync(dir, { recursive: true, force: true });
}
