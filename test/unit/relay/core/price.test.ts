import { describe, expect, it } from 'vitest';
import { checkCatalog } from '../../../../src/relay/core/catalog.js';
import { dailyBlock } from '../../../../src/relay/core/claim-decision.js';
import { entryUsdMicros, satsAt } from '../../../../src/relay/core/price.js';
import { createPrices } from '../../../../src/relay/core/prices.js';

describe('satsAt', () => {
  it('turns dollars into sats at the price, to the nearest sat, at least 1, and records both', () => {
    expect(satsAt({ usd: 0.05 }, 65_000)).toEqual({ sats: 77, terms: { usd: 0.05, btcUsd: 65_000 } });
    expect(satsAt({ usd: 0.05 }, 50_000)).toEqual({ sats: 100, terms: { usd: 0.05, btcUsd: 50_000 } });
    // Half a sat rounds up; a tiny amount is still a sat.
    expect(satsAt({ usd: 0.000005 }, 1_000).sats).toBe(1);
    expect(satsAt({ usd: 0.000001 }, 1_000_000).sats).toBe(1);
    expect(() => satsAt({ usd: 0.05 })).toThrow('needs a price');
  });

  it('keeps a sats amount as written, valued at the price (to the micro-dollar) only when one is given', () => {
    expect(satsAt(21)).toEqual({ sats: 21, terms: {} });
    expect(satsAt(10, 65_000)).toEqual({ sats: 10, terms: { usd: 0.0065, btcUsd: 65_000 } });
    expect(entryUsdMicros(satsAt(10, 65_000.15).terms)).toBe(6500);
    expect(entryUsdMicros(undefined)).toBe(0);
  });
});

describe('a catalog entry priced in dollars', () => {
  const entry = (fields: object) => checkCatalog([{ id: 'gem', title: 'Gem', repeat: { kind: 'once' }, ...fields }]);
  it('takes "usd" in place of "sats", exactly one of them, to the micro-dollar', () => {
    expect(entry({ usd: 0.05 })).toEqual({ entries: [expect.objectContaining({ usd: 0.05 })] });
    expect(entry({ usd: 0.05, sats: 5 })).toEqual({ problems: ['achievements[0] (id "gem"): the entry has both "sats" and "usd": give exactly one of them'] });
    expect(entry({})).toEqual({ problems: ['achievements[0] (id "gem"): the entry has no amount: give "sats" (a whole number) or "usd" (dollars)'] });
    expect(entry({ usd: 0.0000001 })).toEqual({ problems: ['achievements[0] (id "gem"): usd must have at most 6 decimals (a micro-dollar)'] });
    expect(entry({ usd: 0 })).toEqual({ problems: ['achievements[0] (id "gem"): usd must be above 0'] });
  });
});

describe('dailyBlock in dollars', () => {
  const limits = { userDailyCapSats: 0, dailyBudgetSats: 0, dailyBudgetUsd: 0.25, userDailyCapUsd: 0.1 };
  const claim = (btcUsd: number) => satsAt({ usd: 0.05 }, btcUsd);
  it('counts each claim at its dollar value, so the budget buys five $0.05 rewards at any price', () => {
    for (const price of [20_000, 65_000, 250_000]) {
      expect(dailyBlock(claim(price), { userSats: 0, projectSats: 0, userUsdMicros: 0, projectUsdMicros: 200_000 }, limits)).toBeUndefined();
      expect(dailyBlock(claim(price), { userSats: 0, projectSats: 0, userUsdMicros: 0, projectUsdMicros: 250_000 }, limits)).toBe('daily_budget');
      expect(dailyBlock(claim(price), { userSats: 0, projectSats: 0, userUsdMicros: 100_000, projectUsdMicros: 0 }, limits)).toBe('user_daily_cap');
    }
  });
});

/** A price holder (ttl 60 s, max age 600 s) on the test's clock `t`, its source answering `answer`; `asked` counts the asks. */
function holder(t: number, price: number) {
  const h = {
    t,
    answer: { kind: 'ok', data: price } as { kind: 'ok'; data: number } | { kind: 'unavailable'; reason: string },
    asked: 0,
    prices: undefined as unknown as ReturnType<typeof createPrices>,
  };
  h.prices = createPrices(
    async () => {
      h.asked++;
      return h.answer;
    },
    { ttlMs: 60_000, maxAgeMs: 600_000, now: () => h.t },
  );
  return h;
}

describe('the price holder', () => {
  it('answers a claim at once while the price is young enough; older, one refresh is awaited, then price_unavailable', async () => {
    const h = holder(0, 65_000.123);
    const { prices } = h;
    expect(await prices.forClaim()).toEqual({ btcUsd: 65_000.12 });
    expect(h.asked).toBe(1);
    h.t = 500_000;
    expect(await prices.forClaim()).toEqual({ btcUsd: 65_000.12 });
    expect(h.asked).toBe(1);
    h.answer = { kind: 'unavailable', reason: 'service_error_503' };
    h.t = 700_000;
    expect(await prices.forClaim()).toEqual({ unavailable: true, retryAfterSeconds: 60 });
    expect(h.asked).toBe(2);
    // A sats claim under a dollar budget is valued at the last price, however old.
    expect(await prices.forValue()).toEqual({ btcUsd: 65_000.12 });
    expect(prices.peek()).toMatchObject({ btcUsd: 65_000.12, at: 0, error: 'service_error_503' });
  });

  it('takes a price read "later" than now (the clock was stepped back since) as of unknown age: refreshed for a claim, and without an answer, price_unavailable', async () => {
    const h = holder(1_000_000, 65_000);
    const { prices } = h;
    expect(await prices.forClaim()).toEqual({ btcUsd: 65_000 });
    // The clock goes back 1,000 s; 900 s later (real time) the price is older than the 600 s allowed, though the clock says it is from the future.
    h.answer = { kind: 'unavailable', reason: 'service_error_503' };
    h.t = 900_000;
    expect(await prices.forClaim()).toEqual({ unavailable: true, retryAfterSeconds: 60 });
    expect(h.asked).toBe(2);
    // The last one known still values a sats claim; a fresh answer is used at once.
    expect(await prices.forValue()).toEqual({ btcUsd: 65_000 });
    h.answer = { kind: 'ok', data: 64_000 };
    h.t = 902_000;
    expect(await prices.forClaim()).toEqual({ btcUsd: 64_000 });
  });
});
