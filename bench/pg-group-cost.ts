// What a reward costs PostgreSQL and the relay by the size of its groups (issue 39, aim 6): two
// relays over the same load make groups half as large, so whatever a group costs on its own
// (its round trips, its commit, the function's set-up) is paid twice as often per reward. Here a
// store makes whole payouts (claim, recovery point, settlement) in groups of `g` at a time, sizes
// taken in turn round after round, and the server's and this process's CPU per reward is read
// from /proc: a + b/g, CPU and not wall time, so a busy host moves it far less than a rate.
// Run alone: node --import tsx bench/pg-group-cost.ts [rounds] [rewards a size a round]
import { randomUUID } from 'node:crypto';
import { openPgStore } from '../src/relay/index.js';
import { freshDatabase, startPostgres } from '../test/helpers/postgres.js';
import { postmasterPid, serverSeconds } from './cpu.js';
import { resetStatements, STATEMENTS_SETTINGS, statementProfile } from './pg-statements.js';
import { median } from './relay-load.js';

const ROUNDS = Number(process.argv[2] ?? 5);
const PER_SIZE = Number(process.argv[3] ?? 480);
const SIZES = [1, 4, 8, 16];

const ownSeconds = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

const server = await startPostgres(process.env.BENCH_STATEMENTS ? [...STATEMENTS_SETTINGS, 'pg_stat_statements.track=all'] : []);
if (!server) throw new Error('no PostgreSQL server on this machine');
const url = await freshDatabase(server.url);
const store = await openPgStore(url, { owner: 'bench', leaseMs: 60_000 });
const postmaster = await postmasterPid(server.url);
const postgresSeconds = () => serverSeconds(postmaster);
const { ledger } = store;
const NO_LIMITS = { userDailyCapSats: 0, dailyBudgetSats: 0 };
const repeat = { kind: 'cooldown', seconds: 0 } as const;
const users = Array.from({ length: 64 }, () => `p-${randomUUID()}`);

/** `n` payouts, `g` at a time, each group's calls made in one turn (so each step is one group of g). */
async function payouts(g: number, n: number) {
  for (let done = 0; done < n; done += g) {
    const group = users.slice(0, g);
    const claims = await Promise.all(
      group.map((userId) => ledger.claim({ id: randomUUID(), userId, idempotencyKey: randomUUID(), requestHash: 'h', achievementId: 'coin', sats: 1, repeat }, NO_LIMITS)),
    );
    const ids = claims.map((c) => c.entry.id);
    await Promise.all(ids.map((id) => ledger.markSent(id)));
    await Promise.all(ids.map((id) => ledger.settle(id, 'settle', { state: 'paid', paymentId: randomUUID() })));
  }
}

try {
  await payouts(8, 2_000); // warm: plans kept, the table not empty
  // BENCH_STATEMENTS=1: each size's statements, nested ones too (the functions' own), per call.
  if (process.env.BENCH_STATEMENTS)
    for (const g of [1, 8]) {
      await resetStatements(url);
      await payouts(g, 160);
      console.log(`groups of ${g}: mean ms per call, planning + executing`);
      for (const l of await statementProfile(url, 12))
        console.log(`  ${String(l.calls).padStart(6)} ${l.planMs.toFixed(3).padStart(7)} ${l.execMs.toFixed(3).padStart(7)}  ${l.statement}`);
    }
  const server: Record<number, number[]> = {};
  const client: Record<number, number[]> = {};
  for (let r = 0; r < ROUNDS; r++) {
    for (const g of r % 2 ? [...SIZES].reverse() : SIZES) {
      const [s0, c0] = [postgresSeconds(), ownSeconds()];
      await payouts(g, PER_SIZE);
      (server[g] ??= []).push(((postgresSeconds() - s0) * 1e6) / PER_SIZE);
      (client[g] ??= []).push(((ownSeconds() - c0) * 1e6) / PER_SIZE);
    }
  }
  console.log(`CPU per payout (claim, recovery point, settlement) by group size, µs: median of ${ROUNDS} rounds (range)`);
  console.log("  group   PostgreSQL          this process (the relay's store)");
  const show = (xs: number[]) => `${median(xs).toFixed(0).padStart(5)} (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)})`;
  for (const g of SIZES) console.log(`  ${String(g).padStart(5)}   ${show(server[g]!).padEnd(18)}  ${show(client[g]!)}`);
} finally {
  await store.close();
  await server.stop();
}
