// npm run bench: figures for the relay (and, as they land, the client), each beside a
// baseline measured in the same run on the same machine.
import { benchRelay } from './relay-load.js';

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

console.log('rewardbus bench: relay throughput at 64 connections (sandbox in its own process)\n');
const figures = await benchRelay();
const ceiling = figures.find((f) => f.name.startsWith('pass-through'))!;
console.log('scenario                          rewards/s     p50 ms   p99 ms   errors   vs pass-through');
for (const f of figures) {
  console.log(
    `${f.name.padEnd(32)} ${fmt(f.rps).padStart(10)} ${fmt(f.p50, 1).padStart(10)} ${fmt(f.p99, 1).padStart(8)} ${String(f.errors).padStart(8)}   ${fmt((100 * f.rps) / ceiling.rps)}%`,
  );
}
