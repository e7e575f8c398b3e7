// The link use case in-process (core/players.ts): what refuses a link, in which order, and what
// each refusal costs the project (lookups at the service, human checks). The HTTP side's own
// tests (test/relay/link-costs.test.ts) show the same through the relay.
import { describe, expect, it } from 'vitest';
import { createPlayerTokens } from '../../../../src/relay/core/player-tokens.js';
import { createPlayers, type VerifyLink } from '../../../../src/relay/core/players.js';
import { Refusal } from '../../../../src/relay/core/refusal.js';
import type { Outcome } from '../../../../src/relay/payments/client.js';

const NOW = Date.parse('2026-11-25T22:00:00Z');
const tokens = createPlayerTokens('s'.repeat(32), 3_600_000);
const request = () => new Request('http://relay/v1/players', { method: 'POST', body: '{}' });

/** A link use case over a scripted service and an in-memory record of links, noting every call in order. */
function setup(o: { cap?: number; verifyLink?: VerifyLink; answer?: Outcome<{ id: string }>; linked?: string[] } = {}) {
  const calls: string[] = [];
  const warnings: string[] = [];
  const linked = new Set(o.linked ?? []);
  const players = createPlayers({
    payments: {
      userIdByGamertag: async (gamertag) => {
        calls.push(`lookup ${gamertag}`);
        return (o.answer ?? { kind: 'ok', data: { id: `id-${gamertag}` } }) as Outcome<never>;
      },
    },
    tokens,
    ledger: {
      linkedPlayers: async () => {
        calls.push('linkedPlayers');
        return [...linked];
      },
      linkAddress: async (_address, _day, userId, cap) => {
        calls.push(`linkAddress ${userId}`);
        if (!linked.has(userId) && linked.size >= cap) return false;
        linked.add(userId);
        return true;
      },
    },
    ...(o.verifyLink
      ? {
          verifyLink: async (r: Request, l: { gamertag: string; humanCheck?: string }) => {
            calls.push('verifyLink');
            return o.verifyLink!(r, l);
          },
        }
      : {}),
    linksPerAddressPerDay: o.cap ?? 0,
    logger: { warn: (fields: object) => void warnings.push((fields as { event: string }).event) },
  });
  // `address: null`: the relay cannot know the client's address.
  const link = (gamertag: string, { address = '203.0.113.7', humanCheck }: { address?: string | null; humanCheck?: string } = {}) =>
    players.link({ gamertag, ...(humanCheck ? { humanCheck } : {}) }, { address: address ?? undefined, now: NOW, request });
  return { link, calls, warnings };
}

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => expect.unreachable('the link was not refused'),
    (e: unknown) => {
      expect(e).toBeInstanceOf(Refusal);
      const r = e as Refusal;
      return { code: r.code, retryAfterSeconds: r.retryAfterSeconds };
    },
  );

describe('linking a player', () => {
  it('gives a session whose token names the userId the service gave', async () => {
    const { link } = setup();
    const session = await link('alice');
    expect(session).toMatchObject({ userId: 'id-alice', gamertag: 'alice', expiresAt: new Date(NOW + 3_600_000).toISOString() });
    expect(tokens.verify(session.token, NOW)).toMatchObject({ userId: 'id-alice', gamertag: 'alice' });
  });

  it('asks, in order: the address’s links today, the human check, the service, then records the link', async () => {
    const { link, calls } = setup({ cap: 2, verifyLink: () => true });
    await link('alice');
    expect(calls).toEqual(['linkedPlayers', 'verifyLink', 'lookup alice', 'linkAddress id-alice']);
  });

  it('an address at its cap is refused before any human check or lookup, with Retry-After until the next UTC day', async () => {
    const { link, calls } = setup({ cap: 1, linked: ['id-bob'], verifyLink: () => true });
    expect(await refusal(link('alice'))).toEqual({ code: 'too_many_players', retryAfterSeconds: 7200 });
    expect(calls).toEqual(['linkedPlayers']);
  });

  it('a player the address linked today links again at the cap, once this relay has seen the gamertag', async () => {
    const { link, calls } = setup({ cap: 1 });
    await link('alice');
    calls.length = 0;
    await link('alice');
    expect(calls).toEqual(['linkedPlayers', 'lookup alice', 'linkAddress id-alice']);
  });

  it('two links racing past the cap: the record decides, after the lookup', async () => {
    const { link } = setup({ cap: 1 });
    const [a, b] = await Promise.allSettled([link('alice'), link('bob')]);
    expect([a.status, b.status].sort()).toEqual(['fulfilled', 'rejected']);
    const refused = (a.status === 'rejected' ? a.reason : (b as PromiseRejectedResult).reason) as Refusal;
    expect(refused.code).toBe('too_many_players');
  });

  it('without a cap, or without a client address, counts nothing', async () => {
    const uncapped = setup({ cap: 0 });
    await uncapped.link('alice');
    expect(uncapped.calls).toEqual(['lookup alice']);
    const unknown = setup({ cap: 1, linked: ['id-bob'] });
    await unknown.link('alice', { address: null });
    expect(unknown.calls).toEqual(['lookup alice']);
  });

  it('the human check: a no is 403 link_refused, a throw is 503 link_check_unavailable (logged); neither costs a lookup', async () => {
    const no = setup({ verifyLink: () => false });
    expect(await refusal(no.link('alice'))).toEqual({ code: 'link_refused', retryAfterSeconds: undefined });
    expect(no.calls).toEqual(['verifyLink']);
    const down = setup({
      verifyLink: () => {
        throw new Error('captcha down');
      },
    });
    expect(await refusal(down.link('alice'))).toEqual({ code: 'link_check_unavailable', retryAfterSeconds: 5 });
    expect(down.calls).toEqual(['verifyLink']);
    expect(down.warnings).toEqual(['link_check_failed']);
  });

  it('hands the human check the gamertag, its answer, and a readable copy of the request', async () => {
    let seen: unknown;
    const { link } = setup({
      verifyLink: async (r, l) => {
        seen = { ...l, body: await r.text() };
        return true;
      },
    });
    await link('alice', { humanCheck: 'captcha-answer' });
    expect(seen).toEqual({ gamertag: 'alice', humanCheck: 'captcha-answer', body: '{}' });
  });

  it('a gamertag the service does not know is unknown_gamertag; the service out of reach is service_unavailable (logged), nothing recorded', async () => {
    for (const status of [400, 404]) {
      const unknown = setup({ cap: 1, answer: { kind: 'refused', status, message: 'no' } });
      expect(await refusal(unknown.link('alice'))).toEqual({ code: 'unknown_gamertag', retryAfterSeconds: undefined });
      expect(unknown.calls).not.toContain('linkAddress id-alice');
    }
    for (const answer of [{ kind: 'refused', status: 401, message: 'key' } as const, { kind: 'unavailable', reason: 'timeout' } as const]) {
      const down = setup({ cap: 1, answer });
      expect(await refusal(down.link('alice'))).toEqual({ code: 'service_unavailable', retryAfterSeconds: 5 });
      expect(down.warnings).toEqual(['link_failed']);
      expect(down.calls.some((c) => c.startsWith('linkAddress'))).toBe(false);
    }
  });
});
