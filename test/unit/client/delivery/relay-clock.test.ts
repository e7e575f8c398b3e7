import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RelayClock } from '../../../../src/client/delivery/relay-clock.js';

it('bounds how far the relay’s clock is ahead by what it stamped while requests were under way', () => {
  const clock = new RelayClock();
  expect(clock.most).toBeUndefined();
  // Sent at 1000, answered at 1200, the relay's Date header said 5000 (whole seconds): ahead 3800 to 5000.
  clock.read(5_000, 1_000, 1_200, 1000);
  expect(clock.most).toBe(5_000);
  // A claim's record created at 4400 for a request sent at 1100: ahead at most 3300.
  clock.read(4_400, 1_100, 1_300);
  expect(clock.most).toBe(3_300);
  clock.read(Number.NaN, 0, 0);
  expect(clock.most).toBe(3_300);
});

it('starts again when an answer is out of the bounds: this device’s clock was set since', () => {
  const clock = new RelayClock();
  clock.read(5_000, 1_000, 1_200);
  // Set back an hour: the relay is now far more ahead than the bounds allowed.
  clock.read(3_605_000, 1_000, 1_200);
  expect(clock.most).toBe(3_604_000);
});

describe('a device clock set while the page lives', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A bound read now: the relay's clock 2 s ahead of this device's, to the millisecond. */
  const twoSecondsAhead = () => {
    const clock = new RelayClock();
    const now = Date.now();
    clock.read(now + 2_000, now, now);
    return clock;
  };

  it('set back: the relay’s time runs on from its last answer by the monotonic clock', () => {
    const clock = twoSecondsAhead();
    vi.advanceTimersByTime(5_000);
    vi.setSystemTime(Date.now() - 3_600_000);
    expect(performance.now()).toBe(5_000);
    // Before: still 2 s, which put the relay an hour back, and skipped a cooldown it counts as passed.
    expect(clock.most).toBe(3_602_000);
    expect(clock.most).toBe(3_602_000);
  });

  it('a sleep the monotonic clock did not count (or a set-forward: they look alike), then set back: the bound follows the set-back in full', () => {
    const clock = twoSecondsAhead();
    vi.setSystemTime(Date.now() + 7_200_000);
    expect(clock.most).toBe(2_000);
    vi.setSystemTime(Date.now() - 3_600_000);
    // The relay is an hour ahead of this clock now (after a sleep of two hours). Before: 2 s, which skipped what the relay pays.
    expect(clock.most).toBe(3_602_000);
    // Had it been a set-forward by two hours, the truth would be -3,598,000: the bound errs late,
    // where unlock() sends and the relay decides, until its next answer bounds it again.
  });

  it('an answer read after the clock was set forward is in its time: set back, the bound follows', () => {
    const clock = twoSecondsAhead();
    vi.setSystemTime(Date.now() + 3_600_000);
    const now = Date.now();
    clock.read(now - 3_600_000 + 2_000, now, now);
    expect(clock.most).toBe(-3_598_000);
    vi.setSystemTime(Date.now() - 3_600_000);
    expect(clock.most).toBe(2_000);
    expect(clock.most).toBe(2_000);
  });
});
