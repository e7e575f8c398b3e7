import { describe, expect, it } from 'vitest';
import { uuid7 } from '../../../src/relay/core/uuid7.js';

describe('uuid7 (the ledger ids)', () => {
  it('is a version 7, RFC 9562 variant UUID that starts with its time in ms', () => {
    const at = Date.parse('2026-11-22T00:00:00Z'); // 0x01a2008d7400
    const id = uuid7(at);
    expect(id).toMatch(/^01a2008d-7400-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('sorts by time, and never repeats across many draws from its random pool', () => {
    const ids = Array.from({ length: 5000 }, (_, i) => uuid7(1_800_000_000_000 + i));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(Array.from({ length: 20_000 }, () => uuid7())).size).toBe(20_000);
  });
});
