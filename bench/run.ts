// npm run bench: figures for the relay and the client, each beside a baseline measured in the
// same run on the same machine.

import { existsSync, mkdtempSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { claimSteps, printClaimSteps } from './claim-steps.js';
import { bundleSizes, drainTime, printDrain, unlockCost } from './client.js';
import { guestMergeTimes } from './guest-merge.js';
import { manyStreams, printManyStreams } from './many-streams.js';
import { summarizeProfile } from './profile.js';
import { benchRelay, CREDITS_POSTGRES, CREDITS_SQLITE, FLOOR_AT_RATE, type LoadFigures, median, NO_LEDGER, NO_LEDGER_AT_RATE, PASS_AT_RATE, POOLED } from './relay-load.js';
import { printToastLatency, toastLatency } from './toast-latency.js';
import { tournamentTimes } from './tournament.js';

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

console.log('rewardbus bench\n');
console.log('client bundle as packed (minified by esbuild, dependencies included, Phaser excluded)');
for (const s of await bundleSizes()) console.log(`  ${s.name.padEnd(64)} ${fmt(s.min).padStart(7)} B min   ${fmt(s.gzip).padStart(6)} B min+gzip`);

const u = await unlockCost();
console.log('\nunlock(), synchronous cost per call');
console.log(`  unlock()                               ${fmt(u.unlock, 2).padStart(7)} µs`);
console.log(`  unlock() before the courier has come   ${fmt(u.beforeCourier, 2).padStart(7)} µs`);
console.log(`  baseline: emit + UUID + timestamp      ${fmt(u.baseline, 2).padStart(7)} µs   (unlock = ${fmt(u.unlock / u.baseline, 1)}x)`);

console.log('');
printDrain(await drainTime());

// Issue 39, aim 1: what each step of a claim on the relay's own path costs, timed alone.
console.log('');
printClaimSteps(await claimSteps());

// Issue 39, aim 4: the time a player waits from the achievement to its toast.
printToastLatency(await toastLatency());

// Issue 39, aim 5: 10,000 players listening on one relay while 200 rewards/s are paid.
printManyStreams(await manyStreams());

// Issue 39, aim 3: a tournament of 1,000 places posted in one transaction, a guest's 1,000 credits merged.
console.log('\na tournament of 1,000 places posted (one transaction; aim ≤ 1 s on each ledger)');
for (const line of await tournamentTimes()) console.log(line);
const merge = await guestMergeTimes();
console.log('a guest merge of 1,000 credits (median of 3; aim ≤ 200 ms)');
console.log(`  SQLite       ${fmt(merge.sqlite).padStart(6)} ms`);
console.log(`  PostgreSQL   ${merge.postgres === undefined ? '  (no server)' : `${fmt(merge.postgres).padStart(6)} ms`}`);
if (merge.postgres !== undefined && merge.postgresFloor !== undefined) {
  console.log(
    `  its floor    ${fmt(merge.postgresFloor).padStart(6)} ms   (the same rows moved, audited and told by one bare statement; the merge ${(merge.postgres / merge.postgresFloor).toFixed(2)}× it)`,
  );
}

console.log('\nrelay throughput at 64 connections (sandbox, proxy and relay each in their own process)');
console.log('each figure is the median of the rounds: every scenario once per round, round after round');
// --profile: the SQLite relay runs under `node --cpu-prof` (slower), and its profile is summarized.
const profileDir = process.argv.includes('--profile') ? mkdtempSync(join(tmpdir(), 'rewardbus-profile-')) : undefined;
const { figures, rounds, pgCeilingTps, pgActivity, pgStatements } = await benchRelay({ ...(profileDir ? { profileDir } : {}) });
const byName = (prefix: string) => figures.find((f) => f.name.startsWith(prefix));
const ceiling = byName('two-call pass-through')!;
console.log('  scenario                          rewards/s     p50 ms   p99 ms   errors   CPU µs/reward   vs pass-through');
for (const f of figures) {
  const cpu = f.cpuUsPerReward === undefined ? '' : fmt(f.cpuUsPerReward);
  console.log(
    `  ${f.name.padEnd(32)} ${fmt(f.rps).padStart(10)} ${fmt(f.p50, 1).padStart(10)} ${fmt(f.p99, 1).padStart(8)}` +
      ` ${String(f.errors).padStart(8)}   ${cpu.padStart(13)}   ${fmt((100 * f.rps) / ceiling.rps)}%`,
  );
}
if (pgCeilingTps !== undefined)
  console.log(`  ${"PostgreSQL's ceiling (pgbench)".padEnd(32)} ${fmt(pgCeilingTps).padStart(10)} tx/s   (advisory lock + insert per transaction, fsync on, 64 clients)`);

console.log(`\nrewards/s by round (${rounds.length})`);
for (const [i, f] of rounds[0]!.entries()) console.log(`  ${f.name.padEnd(32)} ${rounds.map((r) => fmt(r[i]!.rps).padStart(8)).join('')}`);

// The aims, as ratios of figures measured in this one run: in each round, its two terms measured
// one after the other; the aim's figure is the median of the rounds' ratios.
const column = (prefix: string) => rounds[0]!.findIndex((f) => f.name.startsWith(prefix));
const ratio = (name: string, a: string, b: string, aim: string, of: (f: LoadFigures) => number = (f) => f.rps, percent = true) => {
  const [i, j] = [column(a), column(b)];
  if (i < 0 || j < 0) return;
  const each = rounds.map((r) => of(r[i]!) / of(r[j]!));
  const show = (x: number) => (percent ? `${fmt(100 * x)}%` : `${fmt(x, 2)}x`);
  console.log(`  ${name.padEnd(48)} ${show(median(each)).padStart(5)}   (aim ${aim}; rounds: ${each.map(show).join(', ')})`);
};
/** The throughput aims: a ratio of two scenarios' rates, printed here and again beside what the CPU allows them. */
const THROUGHPUT = {
  sqlite: { name: 'SQLite relay / two-call pass-through', a: 'relay (SQLite', b: 'two-call pass-through', aim: '≥ 60%', percent: true },
  credits: { name: 'credits (SQLite) / SQLite relay payouts', a: CREDITS_SQLITE, b: 'relay (SQLite', aim: '≥ 3x', percent: false },
  pgCredits: { name: 'PostgreSQL credits / SQLite credits', a: CREDITS_POSTGRES, b: CREDITS_SQLITE, aim: '≥ 60%', percent: true },
  pg: { name: 'PostgreSQL relay / SQLite relay', a: 'relay (PostgreSQL', b: 'relay (SQLite', aim: '≥ 60%', percent: true },
  twoRelays: { name: 'two PostgreSQL relays / one', a: '2 relays', b: 'relay (PostgreSQL', aim: '≥ 90%', percent: true },
} as const;
const rateRatio = (t: (typeof THROUGHPUT)[keyof typeof THROUGHPUT]) => ratio(t.name, t.a, t.b, t.aim, (f) => f.rps, t.percent);
console.log("\nratios in this run, the median of the rounds'");
rateRatio(THROUGHPUT.sqlite);
// Not an aim: how far the relay gets with no store at all, the bound the ledger works under.
ratio('(the relay with no ledger / pass-through)', NO_LEDGER, 'two-call pass-through', 'none');
// Aim 1: the relay's own path in CPU per reward. Offered one rate, both do the same work per second
// (the comparable figure); each at saturation, the pass-through runs at about twice the relay's rate.
const cpuOf = (f: LoadFigures) => f.cpuUsPerReward ?? Number.NaN;
ratio('no ledger / pass-through, CPU a reward, one rate', NO_LEDGER_AT_RATE, PASS_AT_RATE, '≤ 1.5x', cpuOf, false);
ratio('(the same, main threads)', NO_LEDGER_AT_RATE, PASS_AT_RATE, 'none', (f) => f.cpu?.serverMainThread ?? Number.NaN, false);
// Not an aim: the floor (bench/floor-relay.ts), what a claim's mandated work costs written as one
// function; what the relay with no ledger costs beside it is its code's arrangement.
ratio('(the floor / pass-through, one rate)', FLOOR_AT_RATE, PASS_AT_RATE, 'none', cpuOf, false);
ratio('(no ledger / the floor, one rate)', NO_LEDGER_AT_RATE, FLOOR_AT_RATE, 'none', cpuOf, false);
ratio('(the same, each at its saturated rate)', NO_LEDGER, 'two-call pass-through', 'none', cpuOf, false);
rateRatio(THROUGHPUT.pg);
rateRatio(THROUGHPUT.twoRelays);
// Not an aim: one relay through PgBouncer in transaction mode beside the same relay direct.
ratio('(one relay through PgBouncer / direct)', POOLED, 'relay (PostgreSQL', 'none');
ratio('(p99 through PgBouncer / direct)', POOLED, 'relay (PostgreSQL', 'none', (f) => f.p99, false);
// Balance mode: a credit calls no service, so the ledger's commit is its limit (issue 39's aims).
rateRatio(THROUGHPUT.credits);
ratio('credits p99 / SQLite payouts p99', CREDITS_SQLITE, 'relay (SQLite', '≤ 1x', (f) => f.p99, false);
rateRatio(THROUGHPUT.pgCredits);
ratio('SQLite p99 / pass-through p99', 'relay (SQLite', 'two-call pass-through', '≤ 2x', (f) => f.p99, false);
ratio('PostgreSQL p99 / SQLite p99', 'relay (PostgreSQL', 'relay (SQLite', '≤ 2x', (f) => f.p99, false);
const sqlite = byName('relay (SQLite');
const pg1 = byName('relay (PostgreSQL');
const noLedger = byName(NO_LEDGER);
// Every process here shares the machine's cores: a rate is bounded by the CPU each reward costs
// all of them. What each aim leaves the server under test, from the figures of this run.
const cores = availableParallelism();
console.log(`\nCPU per reward, by process, in µs (${cores} cores, shared by all of them)`);
console.log('  scenario                          server   PostgreSQL    sandbox   load gen.     total   the machine allows');
/** The rate the machine's cores allow a scenario: its CPU per reward, all processes together. */
const allowed = (f: LoadFigures | undefined) => (f?.cpu ? (cores * 1e6) / (f.cpu.server + f.cpu.database + f.cpu.service + f.cpu.load) : undefined);
for (const f of figures) {
  if (!f.cpu) continue;
  const total = f.cpu.server + f.cpu.database + f.cpu.service + f.cpu.load;
  console.log(
    `  ${f.name.padEnd(32)} ${fmt(f.cpu.server).padStart(7)} ${fmt(f.cpu.database).padStart(12)} ${fmt(f.cpu.service).padStart(10)}` +
      ` ${fmt(f.cpu.load).padStart(11)} ${fmt(total).padStart(9)}   ${fmt(allowed(f)!).padStart(8)} rewards/s`,
  );
}
// Each throughput aim's ratio as the CPU allows it: a ratio measured above it is not this run's
// machine to give (two terms each bounded by what its rewards cost every process sharing the cores).
console.log("\nthe throughput aims as this run's CPU allows them (the ratio of their two terms' 'the machine allows')");
for (const { name, a, b, aim, percent } of Object.values(THROUGHPUT)) {
  const [x, y] = [allowed(byName(a)), allowed(byName(b))];
  if (x === undefined || y === undefined) continue;
  console.log(`  ${name.padEnd(48)} ${(percent ? `${fmt((100 * x) / y)}%` : `${fmt(x / y, 2)}x`).padStart(5)}   (aim ${aim})`);
}
// A relay's JavaScript runs on one thread: whatever the machine has, one core bounds each relay.
console.log("\nthe servers' main threads (JavaScript runs on one per process: a core bounds it)");
console.log("  scenario                          main thread µs/reward   of the server's   its core(s) allow");
for (const f of figures) {
  if (!f.cpu) continue;
  const allows = ((f.servers ?? 1) * 1e6) / f.cpu.serverMainThread;
  console.log(
    `  ${f.name.padEnd(32)} ${fmt(f.cpu.serverMainThread).padStart(21)} ${`${fmt((100 * f.cpu.serverMainThread) / f.cpu.server)}%`.padStart(16)}` +
      ` ${fmt(allows).padStart(12)} rewards/s (it makes ${fmt((100 * f.rps) / allows)}% of that)`,
  );
}

/** An aim as a CPU budget: what the machine has per reward at that rate, less what the others take. */
const budget = (aim: string, rate: number, f: LoadFigures | undefined, ...best: Array<LoadFigures | undefined>) => {
  if (!f?.cpu) return;
  const perReward = (cores * 1e6) / rate;
  const others = f.cpu.database + f.cpu.service + f.cpu.load;
  const left = perReward - others;
  console.log(
    `  ${aim}: ${fmt(rate)} rewards/s leaves ${fmt(perReward)} µs per reward; the others take ${fmt(others)}, ` +
      `${left > 0 ? `so the server may spend ${fmt(left)} µs` : 'so nothing is left for any server'}` +
      ` (it spends ${fmt(f.cpu.server)}${best.map((b) => (b?.cpu ? `; the ${b.name} ${fmt(b.cpu.server)}` : '')).join('')})`,
  );
};
budget('SQLite at 60% of the pass-through', 0.6 * ceiling.rps, sqlite, noLedger, ceiling);
if (sqlite) budget('PostgreSQL at 60% of SQLite', 0.6 * sqlite.rps, pg1, sqlite);

if (pgActivity) {
  console.log(`\nthe PostgreSQL relay's connections under its load (${pgActivity.samples} samples of pg_stat_activity)`);
  for (const [what, share] of Object.entries(pgActivity.shares)) console.log(`  ${fmt(100 * share, 1).padStart(5)}%  ${what}`);
  console.log('  the statements each connection ran last, most seen:');
  for (const [what, share] of Object.entries(pgActivity.statements)) console.log(`    ${fmt(100 * share, 1).padStart(5)}%  ${what}`);
}
if (pgStatements?.length) {
  console.log("\nthe statements that took the server's time under that load (pg_stat_statements; executing includes lock waits)");
  console.log('       calls   plan ms   exec ms   statement');
  for (const l of pgStatements) console.log(`  ${fmt(l.calls).padStart(10)} ${fmt(l.planMs, 3).padStart(9)} ${fmt(l.execMs, 3).padStart(9)}   ${l.statement}`);
}

if (profileDir) {
  for (const [name, dir] of [
    ['SQLite', join(profileDir, 'sqlite')],
    ['PostgreSQL', join(profileDir, 'postgres')],
  ] as const) {
    if (!existsSync(dir)) continue;
    const { top, inclusive } = summarizeProfile(dir);
    // The relay is up for the whole bench: its busy share counts the other scenarios' turns as idle.
    console.log(`\nthe ${name} relay's main thread over the bench, idle while the others had their turns (${dir})`);
    for (const l of inclusive) console.log(`  ${l.name.padEnd(48)} ${fmt(100 * l.share, 1).padStart(5)}%`);
    console.log('  self time, of the busy time:');
    for (const l of top) console.log(`    ${fmt(100 * l.share, 1).padStart(5)}%  ${l.name}`);
  }
}
