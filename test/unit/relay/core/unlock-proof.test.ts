import { describe, expect, it } from 'vitest';
import { checkUnlock } from '../../../../src/relay/core/unlock-proof.js';
import { signUnlock } from '../../../../src/relay/index.js';

// The worked example of docs/unlock-proofs.md: a server in another language checks itself against it.
const SECRET = 'game-server-secret-of-at-least-32-chars';
const NOW = Date.parse('2026-11-23T12:00:00Z');
const EXAMPLE = 'cmJwMQphbGljZQpib3NzLWRlZmVhdGVkCjE3OTU0MzU4MDAKbjBuY2UtMTIz.Igog8kO0O6vfKDVwpb8GyfFAMt6iXLSHGcr95jgQhV0';
const FOR = { gamertag: 'alice', achievementId: 'boss-defeated' };

describe('unlock proofs', () => {
  it('match the documented worked example, byte for byte', () => {
    expect(signUnlock(SECRET, { ...FOR, ttlSeconds: 600 }, NOW, 'n0nce-123')).toBe(EXAMPLE);
    expect(Buffer.from(EXAMPLE.split('.')[0]!, 'base64url').toString()).toBe('rbp1\nalice\nboss-defeated\n1795435800\nn0nce-123');
    expect(checkUnlock([SECRET], EXAMPLE, FOR, NOW)).toEqual({ ok: true, nonce: 'n0nce-123' });
  });

  it('sign with the first of several secrets; every one listed verifies', () => {
    const proof = signUnlock(`${SECRET},an-older-game-server-secret-32-chars-long`, FOR, NOW);
    expect(checkUnlock([SECRET], proof, FOR, NOW).ok).toBe(true);
    const old = signUnlock('an-older-game-server-secret-32-chars-long', FOR, NOW);
    expect(checkUnlock([SECRET, 'an-older-game-server-secret-32-chars-long'], old, FOR, NOW).ok).toBe(true);
    expect(checkUnlock([SECRET], old, FOR, NOW)).toEqual({ ok: false, reason: 'proof_invalid' });
  });

  it('are refused with a stable reason: missing, forged, expired, for another player or achievement', () => {
    expect(checkUnlock([SECRET], undefined, FOR, NOW)).toEqual({ ok: false, reason: 'proof_required' });
    expect(checkUnlock([SECRET], 'nonsense', FOR, NOW)).toEqual({ ok: false, reason: 'proof_invalid' });
    const [payload, sig] = EXAMPLE.split('.');
    const bob = Buffer.from('rbp1\nbob\nboss-defeated\n1795435800\nn0nce-123').toString('base64url');
    expect(checkUnlock([SECRET], `${bob}.${sig}`, { ...FOR, gamertag: 'bob' }, NOW)).toEqual({ ok: false, reason: 'proof_invalid' });
    expect(checkUnlock([SECRET], `${payload}.${sig!.slice(0, -1)}A`, FOR, NOW).ok).toBe(false);
    expect(checkUnlock([SECRET], EXAMPLE, FOR, NOW + 600_000)).toEqual({ ok: false, reason: 'proof_expired' });
    expect(checkUnlock([SECRET], EXAMPLE, { ...FOR, gamertag: 'ALICE' }, NOW)).toEqual({ ok: true, nonce: 'n0nce-123' });
    expect(checkUnlock([SECRET], EXAMPLE, { ...FOR, gamertag: 'mallory' }, NOW)).toEqual({ ok: false, reason: 'proof_other_player' });
    expect(checkUnlock([SECRET], EXAMPLE, { ...FOR, achievementId: 'first-coin' }, NOW)).toEqual({ ok: false, reason: 'proof_other_achievement' });
  });

  it('live at most 30 days: longer is refused when signed and when claimed (its nonce is forgotten after that)', () => {
    const DAYS_30 = 30 * 86_400;
    expect(checkUnlock([SECRET], signUnlock(SECRET, { ...FOR, ttlSeconds: DAYS_30 }, NOW), FOR, NOW).ok).toBe(true);
    expect(() => signUnlock(SECRET, { ...FOR, ttlSeconds: DAYS_30 + 1 }, NOW)).toThrow(/30 days/);
    expect(() => signUnlock(SECRET, { ...FOR, ttlSeconds: 600.5 }, NOW)).toThrow(/whole number/);
    // A game server's clock a little ahead of the relay's.
    expect(checkUnlock([SECRET], signUnlock(SECRET, { ...FOR, ttlSeconds: DAYS_30 }, NOW + 1_800_000), FOR, NOW).ok).toBe(true);
    // Signed elsewhere, with a far expiry: as good as forged.
    const farTomorrow = signUnlock(SECRET, { ...FOR, ttlSeconds: DAYS_30 }, NOW + 86_400_000);
    expect(checkUnlock([SECRET], farTomorrow, FOR, NOW)).toEqual({ ok: false, reason: 'proof_invalid' });
  });
});
