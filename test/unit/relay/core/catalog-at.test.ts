import { describe, expect, it } from 'vitest';
import { createCatalog } from '../../../../src/relay/core/catalog.js';
import { catalogAt, tournamentsAt, usesDollars } from '../../../../src/relay/core/catalog-at.js';

const coin = { id: 'coin', title: 'Coin', sats: 10, repeat: { kind: 'once' } };
const catalog = (...more: object[]) => createCatalog([coin, ...more] as never);

describe('the catalog at a price (issue 38)', () => {
  it('needs a price when any amount is in dollars: an achievement, a later streak step, a prize, a referral reward', () => {
    expect(usesDollars(catalog())).toBe(false);
    expect(usesDollars(catalog({ id: 'login', title: 'Login', repeat: { kind: 'streak', sats: [10, 20] } }))).toBe(false);
    expect(usesDollars(catalog({ id: 'gem', title: 'Gem', usd: 0.05, repeat: { kind: 'once' } }))).toBe(true);
    expect(usesDollars(catalog({ id: 'login', title: 'Login', repeat: { kind: 'streak', sats: [10, { usd: 0.1 }] } }))).toBe(true);
    expect(usesDollars(catalog({ id: 'cup', kind: 'tournament', title: 'Cup', prizes: [100, { usd: 1 }] }))).toBe(true);
    expect(usesDollars(catalog({ id: 'cup', kind: 'tournament', title: 'Cup', prizes: [100, 50] }))).toBe(false);
    expect(usesDollars(catalog({ id: 'invite', kind: 'referral', title: 'Invite', referrerSats: 100, refereeUsd: 0.05, afterPlaySeconds: 0 }))).toBe(true);
    expect(usesDollars(catalog({ id: 'invite', kind: 'referral', title: 'Invite', referrerSats: 100, refereeSats: 50, afterPlaySeconds: 0 }))).toBe(false);
  });

  it('shows steps and prizes in sats at the price (0 with none) beside their usd; entries in sats keep their shape', () => {
    const c = catalog(
      { id: 'login', title: 'Login', repeat: { kind: 'streak', sats: [10, { usd: 0.1 }] } },
      { id: 'cup', kind: 'tournament', title: 'Cup', prizes: [{ usd: 1 }, 500] },
    );
    expect(catalogAt(c, 50_000)).toEqual([{ ...coin }, { id: 'login', title: 'Login', sats: 10, repeat: { kind: 'streak', sats: [10, 200], usd: [null, 0.1] } }]);
    expect(catalogAt(c, undefined)[1]!.repeat).toEqual({ kind: 'streak', sats: [10, 0], usd: [null, 0.1] });
    expect(tournamentsAt(c, 50_000)).toEqual([{ id: 'cup', kind: 'tournament', title: 'Cup', prizes: [2_000, 500], prizesUsd: [1, null] }]);
    expect(tournamentsAt(catalog({ id: 'cup', kind: 'tournament', title: 'Cup', prizes: [100] }), 50_000)).toEqual([
      { id: 'cup', kind: 'tournament', title: 'Cup', prizes: [100] },
    ]);
  });
});
