// What the SQLite store's thread spends on a payout (claim, recovery point, settlement) or a credit,
// statement by statement: the ledger run in this process on a real file, each prepared statement's
// run timed. `node --import tsx bench/sqlite-statements.ts [payout|credit]`. Not part of npm run bench:
// a tool for the store's cost (docs/benchmark.md, "The SQLite store's statements").
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { ClaimLimits, NewClaim } from '../src/relay/core/ports/ledger.js';
import { uuid7 } from '../src/relay/core/uuid7.js';
import { openSqliteDb } from '../src/relay/store/sqlite/db.js';
import { sqliteLedger } from '../src/relay/store/sqlite/ledger.js';

const credit = process.argv[2] === 'credit';
/** As the bench's relays run: no cap or budget, the default denial cooldown. */
const LIMITS: ClaimLimits = { userDailyCapSats: 0, dailyBudgetSats: 0, denialCooldownHours: 24 };
/** Calls per group commit, as the relay's thread commits them under load (24–26). */
const GROUP = 25;
const PLAYERS = 64;

// Every statement prepared from here on is timed, by its text.
const spent = new Map<string, { calls: number; ns: bigint }>();
type Prepare = (this: unknown, sql: string) => Record<string, (...a: unknown[]) => unknown>;
const proto = Database.prototype as unknown as { prepare: Prepare };
const prepare = proto.prepare;
proto.prepare = function (sql) {
  const statement = prepare.call(this, sql);
  const name = sql.replace(/\s+/g, ' ').slice(0, 80);
  for (const m of ['run', 'get', 'all'] as const) {
    const call = statement[m]!.bind(statement);
    statement[m] = (...a) => {
      const t = process.hrtime.bigint();
      const r = call(...a);
      const s = spent.get(name) ?? { calls: 0, ns: 0n };
      s.calls++;
      s.ns += process.hrtime.bigint() - t;
      spent.set(name, s);
      return r;
    };
  }
  // raw() and pluck() change the statement in place: keep the timed methods.
  for (const m of ['raw', 'pluck'] as const) {
    const mode = statement[m]!.bind(statement);
    statement[m] = (...a) => {
      mode(...a);
      return statement;
    };
  }
  return statement;
};

const dir = mkdtempSync(join(tmpdir(), 'rewardbus-statements-'));
const sqlite = openSqliteDb(join(dir, 'ledger.sqlite'));
const ledger = sqliteLedger(sqlite);
const claimOf = (i: number): NewClaim => ({
  id: uuid7(),
  userId: `player-${i % PLAYERS}`,
  idempotencyKey: randomUUID(),
  requestHash: 'h',
  achievementId: 'bench',
  sats: 1,
  repeat: { kind: 'cooldown', seconds: 0 },
  gamertag: 'bench',
  address: '127.0.0.1',
  ...(credit ? { credit: true } : {}),
});

async function rewards(n: number) {
  for (let i = 0; i < n; i += GROUP) {
    const ids = (await Promise.all(Array.from({ length: GROUP }, (_, j) => ledger.claim(claimOf(i + j), LIMITS)))).map((r) => r.entry.id);
    if (credit) continue;
    await Promise.all(ids.map((id) => ledger.markSent(id)));
    await Promise.all(ids.map((id) => ledger.settle(id, 'settle', { state: 'paid', paymentId: randomUUID() })));
  }
}

await rewards(5_000); // warm: JIT, and a ledger that is not empty
spent.clear();
const N = 10_000;
const cpu = process.cpuUsage();
await rewards(N);
const used = process.cpuUsage(cpu);
let statements = 0n;
console.log(`µs a ${credit ? 'credit' : 'payout'}   calls   statement`);
for (const [name, s] of [...spent].sort((a, b) => Number(b[1].ns - a[1].ns))) {
  statements += s.ns;
  console.log(`${(Number(s.ns) / 1000 / N).toFixed(1).padStart(8)} ${(s.calls / N).toFixed(1).padStart(7)}   ${name}`);
}
console.log(
  `${(Number(statements) / 1000 / N).toFixed(1).padStart(8)}           the statements, of ${((used.user + used.system) / N).toFixed(1)} µs CPU (system ${(used.system / N).toFixed(1)})`,
);
await sqlite.close();
rmSync(dir, { recursive: true, force: true });
