// A guest who earned 1,000 credits links: the merge moves each credit to the player in one
// transaction (under both players' locks), each told to the player. Aim (issue 39): ≤ 200 ms on
// SQLite and on PostgreSQL. Run alone: node --import tsx bench/guest-merge.ts

import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { type Ledger, openPgStore, openSqliteStore, type RelayStore } from '../src/relay/index.js';
import { freshDatabase, startPostgres } from '../test/helpers/postgres.js';

export const CREDITS = 1_000;
const NO_LIMITS = { userDailyCapSats: 0, dailyBudgetSats: 0 };
export const REPEATS = new Map([['coin', { kind: 'cooldown', seconds: 0 } as const]]);
/** The merge's rules: a player cap that holds every credit exactly (so the merge reads the player's day, as a capped relay's does). */
export const RULES = { repeats: REPEATS, limits: { userDailyCapSats: CREDITS * 10, dailyBudgetSats: 0 } };

/** A guest who earned `CREDITS` credits, one a millisecond from t0 (a cooldown of 0 s: each kept by the merge). */
export async function creditedGuest(ledger: Ledger, t0 = Date.parse('2026-11-22T10:00:00Z')): Promise<{ guest: string; t0: number }> {
  const guest = `guest-${randomUUID()}`;
  await Promise.all(
    Array.from({ length: CREDITS }, (_, i) =>
      ledger.claim(
        { id: randomUUID(), userId: guest, idempotencyKey: randomUUID(), requestHash: 'h', achievementId: 'coin', sats: 10, repeat: REPEATS.get('coin')!, credit: true },
        NO_LIMITS,
        t0 + i,
      ),
    ),
  );
  return { guest, t0 };
}

/** ms to merge a guest holding `CREDITS` credits into a new player, on a store opened fresh. */
async function mergeMs(store: RelayStore): Promise<number> {
  const { ledger } = store;
  if (!ledger.mergeGuest) throw new Error('this ledger has no guest merge');
  const { guest, t0 } = await creditedGuest(ledger);
  const start = performance.now();
  const merged = await ledger.mergeGuest(guest, `player-${randomUUID()}`, RULES, { actor: 'bench', action: 'merge' }, t0 + CREDITS + 1);
  const ms = performance.now() - start;
  if (merged.moved.length !== CREDITS) throw new Error(`moved ${merged.moved.length} credits of ${CREDITS}`);
  return ms;
}

/**
 * The floor of a PostgreSQL merge: what any merge of the same credits must write, as one bare
 * statement in its own transaction (no locks, no decision, no answer): each credit moved to the
 * player, one audit row and one event (the record the player hears) for each. Timed on the same
 * database as the merge, on a second guest's credits, so a merge slower than the aim beside a
 * floor near it is the server's speed this run, not the relay's code.
 */
const FLOOR_SQL = `WITH m AS (UPDATE rewards SET user_id = $2 WHERE user_id = $1 AND kind = 'credit' RETURNING *),
  a AS (INSERT INTO audit (reward_id, actor, action, from_state, to_state, at) SELECT m.id, 'bench', 'merge', m.state, m.state, $3 FROM m),
  e AS (INSERT INTO events (user_id, type, data, created_at)
    SELECT m.user_id, 'reward', rewardbus_reward_record(m.id, m.idempotency_key, m.achievement_id, m.user_id, m.sats, m.state, m.reason, m.payment_id, m.created_at,
      m.settled_at, m.kind, m.terms), $3 FROM m)
  SELECT count(*)::int AS moved FROM m`;

async function floorMs(url: string, ledger: Ledger): Promise<number> {
  const { guest, t0 } = await creditedGuest(ledger);
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const start = performance.now();
    await db.query('BEGIN');
    const { rows } = await db.query<{ moved: number }>(FLOOR_SQL, [guest, `player-${randomUUID()}`, t0 + CREDITS + 1]);
    await db.query('COMMIT');
    const ms = performance.now() - start;
    if (rows[0]?.moved !== CREDITS) throw new Error(`the floor moved ${rows[0]?.moved} credits of ${CREDITS}`);
    return ms;
  } finally {
    await db.end();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The median of three merges on each ledger (each on a fresh file or database); PostgreSQL when a server can be started. */
export async function guestMergeTimes(): Promise<{ sqlite: number; postgres?: number; postgresFloor?: number }> {
  const sqlite: number[] = [];
  for (let i = 0; i < 3; i++) {
    const dir = mkdtempSync(join(tmpdir(), 'rewardbus-merge-'));
    const store = openSqliteStore(join(dir, 'ledger.sqlite'));
    await store.opened;
    try {
      sqlite.push(await mergeMs(store));
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const server = await startPostgres().catch(() => undefined);
  if (!server) return { sqlite: median(sqlite) };
  const postgres: number[] = [];
  const floor: number[] = [];
  try {
    for (let i = 0; i < 3; i++) {
      const url = await freshDatabase(server.url);
      const store = await openPgStore(url, { owner: 'bench', leaseMs: 60_000 });
      try {
        postgres.push(await mergeMs(store));
        floor.push(await floorMs(url, store.ledger));
      } finally {
        await store.close();
      }
    }
  } finally {
    await server.stop();
  }
  return { sqlite: median(sqlite), postgres: median(postgres), postgresFloor: median(floor) };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const t = await guestMergeTimes();
  console.log(`guest merge of ${CREDITS.toLocaleString('en-US')} credits (median of 3; aim ≤ 200 ms)`);
  console.log(`  SQLite       ${t.sqlite.toFixed(0).padStart(6)} ms`);
  console.log(`  PostgreSQL   ${t.postgres === undefined ? '  (no server)' : `${t.postgres.toFixed(0).padStart(6)} ms`}`);
  if (t.postgresFloor !== undefined) console.log(`  its floor    ${t.postgresFloor.toFixed(0).padStart(6)} ms   (the same rows moved, audited and told by one bare statement)`);
}
