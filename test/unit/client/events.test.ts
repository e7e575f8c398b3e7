import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { eventOf, type RewardBusEvents } from '../../../src/client/events.js';

describe('the event a record status calls for', () => {
  it('says credited (balance mode) as a final outcome, not as a wait', () => {
    expect(eventOf('credited')).toBe('reward:credited');
    expect(eventOf('paid')).toBe('reward:paid');
    expect(eventOf('held')).toBe('reward:held');
    expect(eventOf('needs_review')).toBe('reward:review');
    expect(eventOf('something_new')).toBe('reward:review');
    expect(eventOf('pending')).toBeUndefined();
  });
});

/**
 * Every event the bus emits, as the compiler checks it: an event added to RewardBusEvents (or
 * taken away) fails the type-check here until it is listed, and the test below until client.md says it.
 */
const EVENTS = {
  'reward:queued': true,
  'reward:sent': true,
  'reward:paid': true,
  'reward:credited': true,
  'reward:rejected': true,
  'reward:failed': true,
  'reward:review': true,
  'reward:held': true,
  'reward:waiting': true,
  'reward:skipped': true,
  'player:linked': true,
  'player:merged': true,
  'player:check': true,
  'balance:changed': true,
  'withdrawal:paid': true,
  'withdrawal:failed': true,
  'withdrawal:review': true,
  'ramp:success': true,
  'ramp:error': true,
  'ramp:close': true,
  'ramp:completed': true,
  'ramp:failed': true,
  'relay:offline': true,
  'relay:online': true,
  error: true,
} as const satisfies Record<keyof RewardBusEvents, true>;

describe("docs/client.md's events", () => {
  const doc = readFileSync('docs/client.md', 'utf8');
  const from = doc.indexOf('\n## Events\n');
  /** The event names the first cell of each row of the Events table names. */
  const listed = [...doc.slice(from, doc.indexOf('\n## ', from + 1)).matchAll(/^\| ([^|]+) \|/gm)].flatMap((m) => [...m[1]!.matchAll(/`([a-z:]+)`/g)].map((e) => e[1]!));

  it('has a row for every event the bus emits', () => {
    expect(Object.keys(EVENTS).filter((e) => !listed.includes(e))).toEqual([]);
  });

  it('names no event the bus does not emit', () => {
    expect(listed.filter((e) => !(e in EVENTS))).toEqual([]);
  });
});
