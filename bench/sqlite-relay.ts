// The SQLite relay beside its baselines, without the client figures or PostgreSQL: quick enough
// to repeat while working on the relay's cost per request (noisy machines need several runs).
// `BENCH_SECONDS=4 node --import tsx bench/sqlite-relay.ts [runs] [--profile]`
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { summarizeProfile } from './profile.js';
import { benchRelay, NO_LEDGER } from './relay-load.js';

const runs = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 1);
const profile = process.argv.includes('--profile');
const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

for (let i = 0; i < runs; i++) {
  const profileDir = profile ? mkdtempSync(join(tmpdir(), 'rewardbus-profile-')) : undefined;
  const { figures } = await benchRelay({ postgres: false, ...(profileDir ? { profileDir } : {}) });
  const pass = figures.find((f) => f.name.startsWith('two-call'))!;
  const relay = figures.find((f) => f.name.startsWith('relay (SQLite'))!;
  const noLedger = figures.find((f) => f.name === NO_LEDGER)!;
  for (const f of figures) {
    const cpu = f.cpuUsPerReward === undefined ? '' : `${fmt(f.cpuUsPerReward)} µs/reward`;
    console.log(`${f.name.padEnd(34)} ${fmt(f.rps).padStart(7)} rps  p99 ${fmt(f.p99).padStart(4)} ms  errors ${f.errors}  ${cpu}`);
  }
  console.log(`ratio ${fmt((100 * relay.rps) / pass.rps)}%  p99 ${fmt(relay.p99 / pass.p99, 1)}x  (with no ledger ${fmt((100 * noLedger.rps) / pass.rps)}%)\n`);
  if (profileDir) {
    const { top, inclusive } = summarizeProfile(join(profileDir, 'sqlite'), 25);
    for (const l of [...inclusive, ...top]) console.log(`  ${fmt(100 * l.share, 1).padStart(5)}%  ${l.name}`);
    console.log(`  (profile in ${profileDir})`);
  }
}
