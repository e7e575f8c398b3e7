import { describe, expect, it } from 'vitest';
import { createCatalog } from '../../../../src/relay/core/catalog.js';
import { listedTwice, poolRefusal, prizeKey, prizePlaces, rankingHash, resultsDecision } from '../../../../src/relay/core/tournament-decision.js';

describe("a tournament's results, decided (both ledgers ask here)", () => {
  it('gives one prize per place, in ranking order; places past the prize list get nothing', () => {
    expect(prizePlaces([10_000, 5_000, 2_500], ['a', 'b', 'c', 'd'])).toEqual([
      { place: 1, userId: 'a', sats: 10_000 },
      { place: 2, userId: 'b', sats: 5_000 },
      { place: 3, userId: 'c', sats: 2_500 },
    ]);
    expect(prizePlaces([10_000, 5_000, 2_500], ['a'])).toEqual([{ place: 1, userId: 'a', sats: 10_000 }]);
    expect(prizeKey('cup', '2026-W48', 2)).toBe('tournament:cup:2026-W48:2');
  });

  it('reserves the whole pool from the day budget, or refuses it; no budget, no refusal', () => {
    const pool = [{ sats: 10_000 }, { sats: 5_000 }];
    expect(poolRefusal(pool, 0, { dailyBudgetSats: 15_000 })).toBeUndefined();
    expect(poolRefusal(pool, 1, { dailyBudgetSats: 15_000 })).toBe('daily_budget');
    expect(poolRefusal(pool, 1_000_000, { dailyBudgetSats: 0 })).toBeUndefined();
  });

  it('under a dollar budget counts the pool in dollars, sats prizes at the price they were valued at', () => {
    // 10,000 and 5,000 sats at $50,000 a bitcoin: $5 and $2.50.
    const pool = prizePlaces([10_000, 5_000], ['a', 'b'], 50_000);
    expect(pool.map((p) => p.terms?.usd)).toEqual([5, 2.5]);
    expect(poolRefusal(pool, 0, { dailyBudgetSats: 0, dailyBudgetUsd: 7.5 })).toBeUndefined();
    expect(poolRefusal(pool, 0, { dailyBudgetSats: 0, dailyBudgetUsd: 7.5 }, 1)).toBe('daily_budget');
    expect(poolRefusal(pool, 0, { dailyBudgetSats: 0, dailyBudgetUsd: 7 })).toBe('daily_budget');
  });

  it('tells a new post from the same results again and from other results', () => {
    const hash = rankingHash(['a', 'b']);
    expect(resultsDecision(undefined, hash)).toBe('insert');
    expect(resultsDecision(hash, rankingHash(['a', 'b']))).toBe('existing');
    expect(resultsDecision(hash, rankingHash(['b', 'a']))).toBe('other_results');
    expect(listedTwice(['a', 'b', 'a', 'c', 'b'])).toEqual(['a', 'b']);
  });

  it('reads a tournament in the catalog beside the achievements, never as one', () => {
    const catalog = createCatalog([
      { id: 'coin', title: 'Coin', sats: 1, repeat: { kind: 'once' } },
      { id: 'cup', kind: 'tournament', title: 'Weekly cup', prizes: [10_000, 5_000] },
    ]);
    expect([...catalog.keys()]).toEqual(['coin']);
    expect(catalog.tournaments?.get('cup')?.prizes).toEqual([10_000, 5_000]);
    expect(() => createCatalog([{ id: 'cup', kind: 'tournament', title: 'Cup', prizes: [] } as never])).toThrow(
      /achievements\[0\] \(id "cup"\): prizes must hold at least one prize/,
    );
    expect(() => createCatalog([{ id: 'x', kind: 'raffle', title: 'X' } as never])).toThrow(/kind must be one of: tournament/);
    expect(() =>
      createCatalog([
        { id: 'cup', title: 'Coin', sats: 1, repeat: { kind: 'once' } },
        { id: 'cup', kind: 'tournament', title: 'Cup', prizes: [1] },
      ]),
    ).toThrow(/ids must be unique/);
  });
});
