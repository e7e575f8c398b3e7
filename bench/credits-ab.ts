// Issue 39, aim 2 (credits ≥ 3× the SQLite relay's payouts/s), quick to repeat: only the SQLite
// payouts and the SQLite credits scenarios, one after the other in each round, and the ratio of
// each round's two. `BENCH_ROUNDS=6 BENCH_SECONDS=5 node --import tsx bench/credits-ab.ts` (about
// two minutes). On a shared machine the rates swing 2× between rounds; the CPU each reward cost
// the relay's process swings less, and on two busy cores the rates follow it: its ratio is printed
// beside (payouts' CPU / credits', server only; the sandbox and the load generator add to both).
import { benchRelay, CREDITS_SQLITE, type LoadFigures, median } from './relay-load.js';

const PAYOUTS = 'relay (SQLite';
const { rounds } = await benchRelay({ only: /^relay \(SQLite|^credits \(SQLite/ });
const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const line = (f: LoadFigures) =>
  `${fmt(f.rps).padStart(6)}/s p99 ${fmt(f.p99).padStart(5)} ms, CPU ${fmt(f.cpu?.server ?? 0).padStart(5)} µs/reward (main thread ${fmt(f.cpu?.serverMainThread ?? 0).padStart(5)})`;
const rates: number[] = [];
const cpus: number[] = [];
for (const [i, round] of rounds.entries()) {
  const payouts = round.find((f) => f.name.startsWith(PAYOUTS))!;
  const credits = round.find((f) => f.name === CREDITS_SQLITE)!;
  rates.push(credits.rps / payouts.rps);
  cpus.push((payouts.cpu?.server ?? Number.NaN) / (credits.cpu?.server ?? Number.NaN));
  console.log(`round ${i + 1}  payouts ${line(payouts)}   credits ${line(credits)}   ${fmt(rates[i]!, 2)}x`);
}
const list = (xs: number[]) => xs.map((x) => fmt(x, 2)).join(', ');
console.log(`credits / payouts, rewards/s: ${fmt(median(rates), 2)}x (aim ≥ 3x; rounds: ${list(rates)})`);
console.log(`payouts / credits, CPU per reward: ${fmt(median(cpus), 2)}x (rounds: ${list(cpus)})`);
