// Dollar budgets and caps (issue 38) under claims that come at once, on each ledger itself: the
// claims enter the ledger in one tick, so PostgreSQL decides them in one group (each claim seeing
// what the ones before it in the group reserved) and SQLite in one write batch.
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { satsAt } from '../../src/relay/core/price.js';
import { type ClaimLimits, type NewClaim, openPgStore, openSqliteStore, type RelayStore } from '../../src/relay/index.js';
import { freshDatabase } from '../helpers/postgres.js';

const postgresUrl = inject('postgresUrl');
const T0 = Date.parse('2026-11-26T12:00:00Z');
const opened: RelayStore[] = [];
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
});

const STORES: Array<{ name: string; open: () => Promise<RelayStore> }> = [
  {
    name: 'SQLite',
    open: async () => {
      const s = openSqliteStore(join(mkdtempSync(join(tmpdir(), 'rewardbus-usd-race-')), 'ledger.sqlite'));
      await (s as RelayStore & { opened: Promise<void> }).opened;
      return s;
    },
  },
  ...(postgresUrl ? [{ name: 'PostgreSQL', open: async () => openPgStore(await freshDatabase(postgresUrl, { migrated: true }), { owner: 'race', leaseMs: 60_000 }) }] : []),
];

/** A $0.05 claim at `btcUsd`, as core/claims.ts makes it. */
const claim = (userId: string, btcUsd: number): NewClaim => {
  const { sats, terms } = satsAt({ usd: 0.05 }, btcUsd);
  return { id: randomUUID(), userId, idempotencyKey: randomUUID(), requestHash: 'h', achievementId: 'gem', sats, terms, repeat: { kind: 'cooldown', seconds: 0 } };
};

describe.each(STORES)('dollar limits on the $name ledger under claims at once', ({ open }) => {
  it('a $0.25 budget takes exactly five $0.05 claims of twelve players at once, at two prices', async () => {
    const store = await open();
    opened.push(store);
    const limits: ClaimLimits = { userDailyCapSats: 0, dailyBudgetSats: 0, dailyBudgetUsd: 0.25 };
    const first = await Promise.all(['a', 'b'].map((u) => store.ledger.claim(claim(u, 65_000), limits, T0)));
    expect(first.map((r) => r.entry.state)).toEqual(['sending', 'sending']);
    const rush = await Promise.all(Array.from({ length: 12 }, (_, i) => store.ledger.claim(claim(`p${i}`, 30_000), limits, T0 + 1)));
    const states = rush.map((r) => r.entry.reason ?? r.entry.state).sort();
    expect(states).toEqual([...Array(9).fill('daily_budget'), ...Array(3).fill('sending')]);
    expect(await store.ledger.budgetUsedUsd!('2026-11-26')).toBe(0.25);
    expect(await store.ledger.budgetUsed('2026-11-26')).toBe(2 * 77 + 3 * 167);
  });

  it('a $0.10 cap takes exactly two $0.05 claims of a player, each player alike, at once', async () => {
    const store = await open();
    opened.push(store);
    const limits: ClaimLimits = { userDailyCapSats: 0, dailyBudgetSats: 0, userDailyCapUsd: 0.1 };
    const rush = await Promise.all(Array.from({ length: 12 }, (_, i) => store.ledger.claim(claim(`p${i % 3}`, 40_000 + i), limits, T0)));
    for (let p = 0; p < 3; p++) {
      const mine = rush.filter((_, i) => i % 3 === p).map((r) => r.entry.reason ?? r.entry.state);
      expect(mine.sort()).toEqual(['sending', 'sending', 'user_daily_cap', 'user_daily_cap']);
    }
  });
});
