import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createPlayerTokens } from '../../../../src/relay/core/player-tokens.js';

const OLD = 'the-old-relay-secret-of-32-characters-or-more';
const NEW = 'the-new-relay-secret-of-32-characters-or-more';
const DAY = 24 * 3_600_000;
const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

describe('player tokens', () => {
  it('rotate without an outage: NEW,OLD signs with NEW and still verifies what OLD signed', () => {
    const before = createPlayerTokens(OLD, DAY).issue('user-1', 'alice').token;
    const during = createPlayerTokens(`${NEW},${OLD}`, DAY);
    expect(during.verify(before)?.userId).toBe('user-1');
    const fresh = during.issue('user-2', 'bob').token;
    expect(createPlayerTokens([NEW], DAY).verify(fresh)?.userId).toBe('user-2');
    expect(createPlayerTokens(OLD, DAY).verify(fresh)).toBeUndefined();
  });

  it('refuse a token signed with a retired secret, one no longer listed', () => {
    const old = createPlayerTokens(OLD, DAY).issue('user-1', 'alice').token;
    expect(createPlayerTokens(NEW, DAY).verify(old)).toBeUndefined();
    expect(createPlayerTokens([NEW, 'another-secret-of-thirty-two-characters'], DAY).verify(old)).toBeUndefined();
  });

  it('have exactly one accepted spelling: the last character of the signature, changed in its unused bits, is refused', () => {
    const tokens = createPlayerTokens(NEW, DAY);
    const token = tokens.issue('user-1', 'alice').token;
    const last = B64URL.indexOf(token.at(-1)!);
    // The 43rd character holds 4 bits of the signature and 2 unused ones: these 4 decode alike.
    const spellings = [0, 1, 2, 3].map((low) => token.slice(0, -1) + B64URL[(last & ~3) | low]);
    for (const s of spellings) expect(Buffer.from(s.split('.')[2]!, 'base64url')).toEqual(Buffer.from(token.split('.')[2]!, 'base64url'));
    expect(spellings.filter((s) => tokens.verify(s) !== undefined)).toEqual([token]);
  });

  it('refuse a changed payload, an expired token and anything but rb1.<payload>.<signature>', () => {
    const tokens = createPlayerTokens(NEW, DAY);
    const now = Date.now();
    const { token } = tokens.issue('user-1', 'alice', now);
    const [, payload, signature] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ userId: 'user-9', gamertag: 'alice', exp: now + DAY })).toString('base64url');
    expect(tokens.verify(`rb1.${forged}.${signature}`)).toBeUndefined();
    expect(tokens.verify(token, now + DAY + 1)).toBeUndefined();
    for (const bad of [`${token}=`, `${token}.x`, `rb2.${payload}.${signature}`, ` ${token}`]) expect(tokens.verify(bad)).toBeUndefined();
  });

  it('say when the link issued them (iat, the start of witnessed play); one from before iat counts as issued at exp - ttl', () => {
    const tokens = createPlayerTokens(NEW, DAY);
    const now = Date.now();
    expect(tokens.verify(tokens.issue('user-1', 'alice', now).token, now)).toMatchObject({ iat: now, exp: now + DAY });
    const payload = Buffer.from(JSON.stringify({ userId: 'user-1', gamertag: 'alice', exp: now + 1000 })).toString('base64url');
    const legacy = `rb1.${payload}.${createHmac('sha256', NEW).update(payload).digest('base64url')}`;
    expect(tokens.verify(legacy, now)).toMatchObject({ iat: now + 1000 - DAY });
  });
  it('verify a token lapsed less than `lapsedFor` ago only when asked so: one checked that way (and remembered) is still refused to every other verify', () => {
    const tokens = createPlayerTokens(NEW, DAY);
    const now = Date.now();
    const { token } = tokens.issue('guest_1', '', now, true);
    const later = now + DAY + 1000;
    // The renewal's look first: the token is remembered as genuine...
    expect(tokens.verify(token, later, 30 * DAY)).toMatchObject({ userId: 'guest_1', guest: true });
    // ...and an ordinary request's look still finds it lapsed, as one from before the renewal's.
    expect(tokens.verify(token, later)).toBeUndefined();
    expect(tokens.verify(token, now + 31 * DAY + 1, 30 * DAY)).toBeUndefined();
    // Lapsed longer, never seen before: refused, and not remembered for a later, nearer look.
    const other = tokens.issue('guest_2', '', now, true).token;
    expect(tokens.verify(other, now + 32 * DAY, 30 * DAY)).toBeUndefined();
    expect(tokens.verify(other, later, 30 * DAY)).toMatchObject({ userId: 'guest_2' });
    // A changed payload or a rotated-out secret is no more genuine lapsed than live.
    const [, , signature] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ userId: 'guest_1', gamertag: '', exp: later + DAY, iat: now, guest: true })).toString('base64url');
    expect(tokens.verify(`rb1.${forged}.${signature}`, later, 30 * DAY)).toBeUndefined();
    expect(createPlayerTokens(OLD, DAY).verify(token, later, 30 * DAY)).toBeUndefined();
  });
});
