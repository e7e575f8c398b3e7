import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { PlayerClaims } from './player-tokens.js';
import { secretList } from './secret-list.js';

/** How long a ticket may wait to be used, in seconds. */
export const TICKET_TTL_SECONDS = 60;
/** Tickets redeemed and not yet expired that one relay keeps, at most (60 s of 1 600 streams opened a second). */
const MAX_REDEEMED = 100_000;

/** `rbt1.<base64url payload>.<43 base64url characters: a SHA-256 HMAC>`. */
const TICKET = /^rbt1\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/;

/** What a ticket says: the player token's claims, when the ticket expires (ms), and its nonce. */
interface TicketClaims extends PlayerClaims {
  until: number;
  nonce: string;
}

/** A ticket's answer: the player, or why not. `busy`: this relay holds too many live tickets to tell a replay. */
export type Redeemed = { player: PlayerClaims } | { refused: 'invalid' | 'expired' | 'used' | 'busy' };

/**
 * Single-use tickets for the event stream, so the long-lived player token need not be in a URL
 * (where access logs, browser history and Referer keep it): `POST /v1/events/ticket` with the
 * token in the Authorization header, then `GET /v1/events?ticket=…` once, within 60 s.
 *
 * A ticket is self-contained, signed with the player-token secret (the first signs, every one
 * verifies, as tokens rotate), so any relay behind a load balancer takes it. Its signature is
 * over `rbt1.` and the payload, so no ticket verifies as a token nor a token as a ticket.
 *
 * Single use is kept per relay process: each nonce redeemed here stays in a bounded map until its
 * ticket expires. A ticket replayed on *another* relay within its 60 s opens a second stream
 * there: that window is bounded by the ticket's life, and by the stream caps per player.
 */
export function createStreamTickets(secrets: string | readonly string[], ttlMs = TICKET_TTL_SECONDS * 1000) {
  const keys = secretList(secrets);
  if (!keys.length) throw new Error('createStreamTickets needs a secret');
  const mac = (key: string, payload: string) => createHmac('sha256', key).update(`rbt1.${payload}`).digest('base64url');
  /** nonce → when its ticket expires (ms). */
  const redeemed = new Map<string, number>();
  let sweptAt = 0;
  const sweep = (now: number) => {
    for (const [nonce, until] of redeemed) if (until <= now) redeemed.delete(nonce);
    sweptAt = now;
  };

  return {
    ttlSeconds: Math.round(ttlMs / 1000),
    /** A ticket for the player of a verified token; it expires in 60 s, or with the token if sooner. */
    issue(player: PlayerClaims, now = Date.now()): string {
      const claims: TicketClaims = { ...player, until: Math.min(now + ttlMs, player.exp), nonce: randomBytes(16).toString('base64url') };
      const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
      return `rbt1.${payload}.${mac(keys[0]!, payload)}`;
    },
    /** The ticket's player, once: a second use of the same ticket on this relay is `used`. */
    redeem(ticket: string, now = Date.now()): Redeemed {
      const claims = usable(ticket, now);
      if ('refused' in claims) return claims;
      if (redeemed.size >= MAX_REDEEMED || now - sweptAt > ttlMs) sweep(now);
      // Forgetting a live nonce would let its ticket be used again: refuse new ones instead.
      if (redeemed.size >= MAX_REDEEMED) return { refused: 'busy' };
      redeemed.set(claims.nonce, claims.until);
      return { player: playerOf(claims) };
    },
    /**
     * What `redeem` would answer, leaving the ticket unused: a HEAD (a proxy, a prefetch) asks what
     * the URL answers, and must not spend the ticket its EventSource opens with next.
     */
    peek(ticket: string, now = Date.now()): Redeemed {
      const claims = usable(ticket, now);
      return 'refused' in claims ? claims : { player: playerOf(claims) };
    },
  };

  /** A genuine ticket's claims while it may open a stream here, or why not. */
  function usable(ticket: string, now: number): TicketClaims | { refused: 'invalid' | 'expired' | 'used' } {
    const claims = verify(ticket);
    if (!claims) return { refused: 'invalid' };
    if (claims.until <= now || claims.exp <= now) return { refused: 'expired' };
    if (redeemed.has(claims.nonce)) return { refused: 'used' };
    return claims;
  }

  /** A guest's ticket stays a guest's: once the guest linked, it is refused as its token is. */
  function playerOf({ userId, gamertag, exp, iat, guest }: TicketClaims): PlayerClaims {
    return { userId, gamertag, exp, iat, ...(guest === true ? { guest } : {}) };
  }

  function verify(ticket: string): TicketClaims | undefined {
    const m = TICKET.exec(ticket);
    if (!m) return undefined;
    const [, payload = '', signature = ''] = m;
    const given = Buffer.from(signature);
    // Every secret is tried (no early exit), so the time taken says nothing of which one matched.
    let good = false;
    for (const key of keys) good = timingSafeEqual(given, Buffer.from(mac(key, payload))) || good;
    if (!good) return undefined;
    try {
      const c = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Partial<TicketClaims>;
      const strings = [c.userId, c.gamertag, c.nonce].every((v) => typeof v === 'string');
      const numbers = [c.exp, c.iat, c.until].every((v) => typeof v === 'number');
      return strings && numbers ? (c as TicketClaims) : undefined;
    } catch {
      return undefined;
    }
  }
}

export type StreamTickets = ReturnType<typeof createStreamTickets>;
