import { describe, expect, it } from 'vitest';
import { eventOf } from '../../../src/client/events.js';

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
