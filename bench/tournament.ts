// A tournament's results of 1,000 places, posted through the relay's core (issue 37) on each
// ledger: the ranking resolved (players linked with the relay), the pool checked against the day's
// budget, the post and its 1,000 prizes written in one transaction through the store's one write
// primitive. Prints the milliseconds of each post (the goal: at most 1,000 ms).
//   node --import tsx bench/tournament.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createCore } from '../src/relay/core/create-core.js';
import type { RelayStore } from '../src/relay/core/ports/relay-store.js';
import { createCatalog, createLogger } from '../src/relay/index.js';
import { openPgStore } from '../src/relay/store/postgres/store.js';
import { openSqliteStore } from '../src/relay/store/sqlite/store.js';
import { freshDatabase, startPostgres } from '../test/helpers/postgres.js';

const PLACES = 1_000;
const ROUNDS = 3;
const catalog = createCatalog([{ id: 'cup', kind: 'tournament', title: 'Weekly cup', prizes: Array.from({ length: PLACES }, (_, i) => 1_000 - i) }]);

/** Each round a fresh period: `ms` from the call to the committed answer. */
async function bench(name: string, store: RelayStore): Promise<string> {
  // Credited (balance mode): the post's own cost, with no payment after it.
  const core = createCore({ store, catalog, limits: { userDailyCapSats: 1_000, dailyBudgetSats: 0 }, logger: createLogger('silent'), payoutMode: 'balance' });
  const ranking = Array.from({ length: PLACES }, (_, i) => `player-${i}`);
  await Promise.all(ranking.map((u) => store.ledger.rememberPlayer!(`uid-${u}`, u, Date.now())));
  const times: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const started = performance.now();
    const r = await core.postResults!('cup', { period: `bench-${round}`, ranking }, 'bench');
    times.push(performance.now() - started);
    if (!r.created || r.entries.length !== PLACES) throw new Error(`${name}: the post recorded ${r.entries.length} prizes`);
  }
  // Then the same results again (a replay: read, nothing written).
  const started = performance.now();
  await core.postResults!('cup', { period: 'bench-0', ranking }, 'bench');
  const replay = performance.now() - started;
  return `  ${name.padEnd(12)} ${PLACES} places: ${times.map((t) => `${t.toFixed(0)} ms`).join(', ')} (best ${Math.min(...times).toFixed(0)} ms); the same again: ${replay.toFixed(0)} ms`;
}

/** Each ledger's line: SQLite, and PostgreSQL when a server can be started here. */
export async function tournamentTimes(): Promise<string[]> {
  const lines: string[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'rewardbus-bench-tournament-'));
  const sqlite = openSqliteStore(join(dir, 'ledger.sqlite'));
  await sqlite.opened;
  try {
    lines.push(await bench('SQLite', sqlite));
  } finally {
    await sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const server = await startPostgres();
  if (!server) lines.push('  PostgreSQL: not installed here (apt-get install -y postgresql), not measured');
  else {
    const store = await openPgStore(await freshDatabase(server.url), { owner: 'bench', leaseMs: 60_000 });
    try {
      lines.push(await bench('PostgreSQL', store));
    } finally {
      await store.close();
      await server.stop();
    }
  }
  return lines;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) for (const line of await tournamentTimes()) console.log(line);
