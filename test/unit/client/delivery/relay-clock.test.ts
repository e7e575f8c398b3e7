import { expect, it } from 'vitest';
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
