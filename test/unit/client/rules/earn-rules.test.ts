import { describe, expect, it } from 'vitest';
import { earnBlock, lastEarned } from '../../../../src/client/rules/index.js';
import type { CatalogEntry, RewardRecord } from '../../../../src/wire/relay-api.js';

const HOUR = 3_600_000;
const daily: CatalogEntry = { id: 'daily', title: 'Daily', sats: 5, repeat: { kind: 'daily' } };
const record = (createdAt: number): RewardRecord =>
  ({ id: 'r1', userId: 'u1', achievementId: 'daily', sats: 5, status: 'paid', createdAt: new Date(createdAt).toISOString() }) as RewardRecord;

// The relay at 00:30 UTC; the device an hour behind (23:30 yesterday, by its clock); the daily
// reward last earned yesterday at 10:00, by the relay's clock.
const relayNow = Date.parse('2026-11-27T00:30:00Z');
const deviceNow = relayNow - HOUR;
const history = [record(Date.parse('2026-11-26T10:00:00Z'))];
const judged = (ahead: number | undefined) => earnBlock(daily, lastEarned('daily', 'u1', [], history, ahead), deviceNow, ahead);

describe('a daily reward just after the relay’s midnight, on a device clock an hour behind', () => {
  it('is not skipped once the relay’s answers bound its clock (here within 2 s)', () => {
    expect(judged(HOUR + 2_000)).toBeUndefined();
  });

  it('is not skipped while nothing bounds the relay’s clock: the relay decides', () => {
    expect(judged(undefined)).toBeUndefined();
  });

  it('is skipped when earned on the relay’s day, until the relay’s next midnight by this device’s clock', () => {
    const today = [record(relayNow - 60_000)];
    const ahead = HOUR + 2_000;
    expect(earnBlock(daily, lastEarned('daily', 'u1', [], today, ahead), deviceNow, ahead)).toEqual({
      reason: 'already_claimed_today',
      retryAt: Date.parse('2026-11-28T00:00:00Z') - ahead,
    });
  });
});

describe('an achievement earned once', () => {
  it('is skipped whatever the clocks say', () => {
    const once: CatalogEntry = { ...daily, repeat: { kind: 'once' } };
    expect(earnBlock(once, lastEarned('daily', 'u1', [], history, undefined), deviceNow, undefined)).toEqual({ reason: 'already_claimed' });
  });
});
