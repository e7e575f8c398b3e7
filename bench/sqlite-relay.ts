// The SQLite relay beside its baselines, without the client figures or PostgreSQL: quick enough
// to repeat while working on the relay's cost per request (noisy machines need several runs).
// `BENCH_SECONDS=4 node --import tsx bench/sqlite-relay.ts [runs] [--only=REGEX] [--profile]`
// --only: the scenarios whose names match (e.g. `--only='pass-through|no ledger'`); --profile: each
// server under `node --cpu-prof` (slower), its main thread summarized.
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { summarizeProfile } from './profile.js';
import { benchRelay, CREDITS_SQLITE, NO_LEDGER, NO_LEDGER_AT_RATE, PASS_AT_RATE } from './relay-load.js';

const runs = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 1);
const profile = process.argv.includes('--profile');
const onlyArg = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);
const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

for (let i = 0; i < runs; i++) {
  const profileDir = profile ? mkdtempSync(join(tmpdir(), 'rewardbus-profile-')) : undefined;
  const { figures, rounds } = await benchRelay({ postgres: false, ...(profileDir ? { profileDir } : {}), ...(onlyArg ? { only: new RegExp(onlyArg) } : {}) });
  for (const f of figures) {
    const cpu = f.cpuUsPerReward === undefined ? '' : `${fmt(f.cpuUsPerReward)} µs/reward (main thread ${fmt(f.cpu!.serverMainThread)})`;
    console.log(`${f.name.padEnd(34)} ${fmt(f.rps).padStart(7)} rps  p99 ${fmt(f.p99).padStart(4)} ms  errors ${f.errors}  ${cpu}`);
  }
  // Ratios within each round (its scenarios seconds apart), then their median.
  const column = (prefix: string) => rounds[0]!.findIndex((f) => f.name.startsWith(prefix));
  const ratio = (label: string, a: string, b: string, of: (f: (typeof figures)[number]) => number) => {
    const [x, y] = [column(a), column(b)];
    if (x < 0 || y < 0) return;
    const each = rounds.map((r) => of(r[x]!) / of(r[y]!)).sort((p, q) => p - q);
    console.log(`  ${label.padEnd(48)} ${fmt(each[each.length >> 1]!, 2)}x  (rounds: ${each.map((e) => fmt(e, 2)).join(', ')})`);
  };
  const cpu = (f: (typeof figures)[number]) => f.cpuUsPerReward ?? Number.NaN;
  ratio('CPU/reward: no ledger / pass-through', NO_LEDGER, 'two-call pass-through', cpu);
  ratio('CPU/reward: the same, both offered one rate', NO_LEDGER_AT_RATE, PASS_AT_RATE, cpu);
  ratio('CPU/reward: SQLite relay / pass-through', 'relay (SQLite', 'two-call pass-through', cpu);
  ratio('CPU/reward: credits / pass-through', CREDITS_SQLITE, 'two-call pass-through', cpu);
  ratio('rewards/s: SQLite relay / pass-through', 'relay (SQLite', 'two-call pass-through', (f) => f.rps);
  ratio('rewards/s: no ledger / pass-through', NO_LEDGER, 'two-call pass-through', (f) => f.rps);
  ratio('rewards/s: credits / SQLite relay', CREDITS_SQLITE, 'relay (SQLite', (f) => f.rps);
  console.log('');
  if (profileDir) {
    for (const name of ['pass-through', 'no-ledger', 'sqlite', 'credits']) {
      const dir = join(profileDir, name);
      if (!existsSync(dir)) continue;
      const { top, inclusive } = summarizeProfile(dir, 25);
      console.log(`the ${name} server's main thread (${dir})`);
      for (const l of [...inclusive, ...top]) console.log(`  ${fmt(100 * l.share, 1).padStart(5)}%  ${l.name}`);
    }
  }
}
