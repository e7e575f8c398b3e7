import { describe, expect, it, vi } from 'vitest';
import type { RelayClient } from '../../../../src/client/delivery/index.js';
import { PlayerSessions } from '../../../../src/client/players/index.js';
import { createWriteBatch, memoryStorage, type RewardStorage } from '../../../../src/client/storage/index.js';
import type { PlayerSession } from '../../../../src/wire/relay-api.js';

const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();
const IN_AN_HOUR = inAnHour();
const alice = (token = 't1', expiresAt = IN_AN_HOUR): PlayerSession => ({ userId: 'u-alice', gamertag: 'alice', token, expiresAt });

/** PlayerSessions over `storage`, with a relay whose link() answers `answer` (a new token for alice by default). */
function sessionsOn(storage: RewardStorage = memoryStorage(), answer: () => Awaited<ReturnType<RelayClient['link']>> = () => ({ ok: true, status: 201, body: alice('renewed') })) {
  const link = vi.fn(async (_gamertag: string) => answer());
  const writes = createWriteBatch(storage, (err) => {
    throw err;
  });
  /** The gamertags the human check's refusals were said for. */
  const checks: string[] = [];
  const sessions = new PlayerSessions(storage, writes, { link } as unknown as RelayClient, (e) => void checks.push(e.gamertag));
  return { sessions, link, writes, storage, checks };
}

describe('PlayerSessions', () => {
  it('remembers the adopted player across a reload', async () => {
    const first = sessionsOn();
    first.sessions.adopt(alice());
    await first.writes.written;
    const reloaded = sessionsOn(first.storage);
    expect(await reloaded.sessions.load()).toEqual(alice());
    expect(reloaded.sessions.current).toEqual(alice());
    expect(reloaded.sessions.gamertagOf('u-alice')).toBe('alice');
  });

  it('knows when the session began (its play time counts from the link), across a reload, and anew after a renewal', async () => {
    // The clock is the test's: the renewal comes a known 5 s after the link.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const linkedAt = Date.parse('2026-11-25T10:00:00.000Z');
      vi.setSystemTime(linkedAt);
      const first = sessionsOn(memoryStorage(), () => ({ ok: true, status: 201, body: alice('renewed', inAnHour()) }));
      first.sessions.adopt(alice('t1', new Date(linkedAt + 30_000).toISOString()));
      expect(first.sessions.linkedAt('u-alice')).toBe(linkedAt);
      await first.writes.written;
      const reloaded = sessionsOn(first.storage, () => ({ ok: true, status: 201, body: alice('renewed', inAnHour()) }));
      await reloaded.sessions.load();
      expect(reloaded.sessions.linkedAt('u-alice')).toBe(linkedAt);
      vi.setSystemTime(linkedAt + 5_000);
      // The token lapses within the minute: linking again begins a new session, now.
      expect(await reloaded.sessions.forUser('u-alice')).toMatchObject({ token: 'renewed' });
      expect(reloaded.sessions.linkedAt('u-alice')).toBe(linkedAt + 5_000);
      expect(reloaded.sessions.linkedAt('u-nobody')).toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });

  it('renews a lapsed token once for callers that ask together (the queue and the balance after a lapse)', async () => {
    const s = sessionsOn();
    s.sessions.adopt(alice('t1', new Date(Date.now() - 1_000).toISOString()));
    const both = await Promise.all([s.sessions.forUser('u-alice'), s.sessions.forUser('u-alice')]);
    expect(both.map((x) => (typeof x === 'object' ? x.token : x))).toEqual(['renewed', 'renewed']);
    expect(s.link).toHaveBeenCalledTimes(1);
    // Renewed, it is used as it is; a later lapse renews it again.
    expect(await s.sessions.forUser('u-alice')).toMatchObject({ token: 'renewed' });
    expect(s.link).toHaveBeenCalledTimes(1);
  });

  it('uses a fresh token as it is, without asking the relay', async () => {
    const s = sessionsOn();
    s.sessions.adopt(alice());
    expect(await s.sessions.forUser('u-alice')).toEqual(alice());
    expect(s.link).not.toHaveBeenCalled();
  });

  it('renews a token about to lapse by linking the gamertag again, and keeps the new one', async () => {
    const s = sessionsOn();
    s.sessions.adopt(alice('old', new Date(Date.now() + 30_000).toISOString()));
    const renewed = await s.sessions.forUser('u-alice');
    expect(renewed).toMatchObject({ token: 'renewed' });
    expect(s.link).toHaveBeenCalledWith('alice');
    // The current player follows, and the next use needs no request.
    expect(s.sessions.current?.token).toBe('renewed');
    expect(await s.sessions.forUser('u-alice')).toMatchObject({ token: 'renewed' });
    expect(s.link).toHaveBeenCalledTimes(1);
    await s.writes.written;
    expect(await s.storage.get('session:u-alice')).toMatchObject({ token: 'renewed' });
  });

  it('renews a token the relay refused (expire), even before its stated expiry', async () => {
    const s = sessionsOn();
    s.sessions.adopt(alice());
    s.sessions.expire('u-alice');
    expect(await s.sessions.forUser('u-alice')).toMatchObject({ token: 'renewed' });
  });

  it('gives up on a gamertag that is gone or now belongs to someone else, and waits when the relay cannot say', async () => {
    const expired = alice('old', new Date(0).toISOString());
    const cases: Array<[Awaited<ReturnType<RelayClient['link']>>, unknown]> = [
      [{ ok: true, status: 201, body: { ...alice('other'), userId: 'u-someone-else' } }, undefined],
      [{ ok: false, status: 404, problem: { type: 'about:blank', title: 'Unknown gamertag', status: 404, code: 'unknown_gamertag' } }, undefined],
      [{ ok: false, status: 503 }, 'unreachable'],
      // The door's rate limit or a timeout: no answer about the player (its intents must wait, not be rejected).
      [{ ok: false, status: 429 }, 'unreachable'],
      [{ ok: false, status: 408 }, 'unreachable'],
      [{ ok: false, status: 0, unreachable: true }, 'unreachable'],
    ];
    for (const [answer, expected] of cases) {
      const s = sessionsOn(memoryStorage(), () => answer);
      s.sessions.adopt(expired);
      expect(await s.sessions.forUser('u-alice')).toBe(expected);
      expect(s.sessions.current?.token).toBe('old');
    }
  });

  it('waits for a link when the human check refuses the renewal: said once, not asked again, and a link ends the wait', async () => {
    const refused = { ok: false as const, status: 403, problem: { type: 'about:blank', title: 'The human check at link did not pass', status: 403, code: 'link_refused' } };
    const s = sessionsOn(memoryStorage(), () => refused);
    s.sessions.adopt(alice('old', new Date(0).toISOString()));
    expect(await Promise.all([s.sessions.forUser('u-alice'), s.sessions.forUser('u-alice')])).toEqual(['check', 'check']);
    expect(await s.sessions.forUser('u-alice')).toBe('check');
    s.sessions.expire('u-alice');
    expect(await s.sessions.forUser('u-alice')).toBe('check');
    expect(s.link).toHaveBeenCalledTimes(1);
    expect(s.checks).toEqual(['alice']);
    expect(s.sessions.waitsForLink('u-alice')).toBe(true);
    // The game showed its captcha and linked the player with it.
    s.sessions.adopt(alice('checked'));
    expect(s.sessions.waitsForLink('u-alice')).toBe(false);
    expect(await s.sessions.forUser('u-alice')).toMatchObject({ token: 'checked' });
    expect(s.link).toHaveBeenCalledTimes(1);
  });

  it('ends the wait for the human check when another tab stored a fresh session for the player (linked there with a check)', async () => {
    const refused = { ok: false as const, status: 403, problem: { type: 'about:blank', title: 'Refused', status: 403, code: 'link_refused' } };
    const s = sessionsOn(memoryStorage(), () => refused);
    s.sessions.adopt(alice('old', new Date(0).toISOString()));
    expect(await s.sessions.forUser('u-alice')).toBe('check');
    await s.writes.written;
    // The stored session is still the refused one: the wait goes on, the relay is not asked again.
    expect(await s.sessions.forUser('u-alice')).toBe('check');
    // Another tab (which this one may not hear: no BroadcastChannel) linked alice with a check.
    await s.storage.setMany([['session:u-alice', alice('linked-there')]]);
    expect(await s.sessions.forUser('u-alice')).toEqual(alice('linked-there'));
    expect(s.sessions.waitsForLink('u-alice')).toBe(false);
    expect(s.sessions.current?.token).toBe('linked-there');
    expect(s.link).toHaveBeenCalledTimes(1);
    expect(s.checks).toEqual(['alice']);
  });

  it('takes a link made while a renewal was on its way over that renewal’s refusal by the human check', async () => {
    let refuse: () => void = () => undefined;
    const s = sessionsOn(memoryStorage(), () => ({ ok: false, status: 403, problem: { type: 'about:blank', title: 'Refused', status: 403, code: 'link_refused' } }));
    s.link.mockImplementationOnce(
      () => new Promise((resolve) => (refuse = () => resolve({ ok: false, status: 403, problem: { type: 'about:blank', title: 'Refused', status: 403, code: 'link_refused' } }))),
    );
    s.sessions.adopt(alice('old', new Date(0).toISOString()));
    const renewing = s.sessions.forUser('u-alice');
    await vi.waitFor(() => expect(s.link).toHaveBeenCalledTimes(1));
    s.sessions.adopt(alice('checked'));
    refuse();
    expect(await renewing).toMatchObject({ token: 'checked' });
    expect(s.sessions.waitsForLink('u-alice')).toBe(false);
    expect(s.checks).toEqual([]);
  });

  it('says no refusal by the human check while the game links the player itself (its own link answers for it)', async () => {
    const s = sessionsOn(memoryStorage(), () => ({ ok: false, status: 403, problem: { type: 'about:blank', title: 'Refused', status: 403, code: 'link_refused' } }));
    s.sessions.adopt(alice('old', new Date(0).toISOString()));
    // The game links alice with its captcha as the queue renews her lapsed token.
    const linked = s.sessions.linking('alice');
    expect(await s.sessions.forUser('u-alice')).toBe('check');
    expect(s.checks).toEqual([]);
    s.sessions.adopt(alice('checked'));
    linked();
    expect(await s.sessions.forUser('u-alice')).toMatchObject({ token: 'checked' });
    // Once it is done, a refusal is said again.
    s.sessions.expire('u-alice');
    expect(await s.sessions.forUser('u-alice')).toBe('check');
    expect(s.checks).toEqual(['alice']);
  });

  it("finds another player's stored session, for intents queued before a switch", async () => {
    const storage = memoryStorage();
    await storage.setMany([['session:u-bob', { userId: 'u-bob', gamertag: 'bob', token: 'tb', expiresAt: inAnHour() }]]);
    const s = sessionsOn(storage);
    s.sessions.adopt(alice());
    expect(await s.sessions.forUser('u-bob')).toMatchObject({ token: 'tb' });
    // None on this device (its storage lost it): their intents wait for their link, kept.
    expect(await s.sessions.forUser('u-nobody')).toBe('check');
    expect(s.sessions.waitsForLink('u-nobody')).toBe(true);
    expect(s.sessions.gamertagOf(undefined)).toBe('alice');
  });
});
