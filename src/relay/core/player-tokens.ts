import { createHmac, timingSafeEqual } from 'node:crypto';
import { secretList } from './secret-list.js';

/** What a player token vouches for. */
export interface PlayerClaims {
  userId: string;
  gamertag: string;
  /** Expiry, in ms since the epoch. */
  exp: number;
  /**
   * When the link issued it, in ms: the start of the player's play session, by the relay's clock
   * (witnessed play). Tokens from before it was written count as issued at `exp - ttl`.
   */
  iat: number;
  /** A guest (balance mode): a relay-made id and no gamertag; earns, cannot withdraw, until it links. */
  guest?: true;
}

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64url');
/** `rb1.<base64url payload>.<43 base64url characters: a SHA-256 HMAC>`. */
const TOKEN = /^rb1\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/;

/**
 * Compact HMAC-SHA256 tokens, `rb1.<payload>.<signature>`: only the relay can mint them, so a
 * client cannot claim rewards for another userId.
 *
 * `secrets` rotate without an outage: the first signs, every one verifies; a token signed with a
 * secret no longer listed is refused.
 */
export function createPlayerTokens(secrets: string | readonly string[], ttlMs: number) {
  const keys = secretList(secrets);
  if (!keys.length) throw new Error('createPlayerTokens needs a secret');
  const signWith = (secret: string, payload: string) => createHmac('sha256', secret).update(payload).digest('base64url');
  const sign = (payload: string) => signWith(keys[0]!, payload);
  // A player sends the same token with every claim: check its signature once.
  const verified = new Map<string, PlayerClaims>();
  return {
    issue(userId: string, gamertag: string, now = Date.now(), guest = false): { token: string; claims: PlayerClaims } {
      const claims: PlayerClaims = { userId, gamertag, exp: now + ttlMs, iat: now, ...(guest ? { guest: true as const } : {}) };
      const payload = b64(JSON.stringify(claims));
      return { token: `rb1.${payload}.${sign(payload)}`, claims };
    },
    /** The claims of a genuine, unexpired token (or one lapsed less than `lapsedFor` ms ago); undefined otherwise. */
    verify(token: string, now = Date.now(), lapsedFor = 0): PlayerClaims | undefined {
      const known = verified.get(token);
      if (known) return known.exp > now - lapsedFor ? known : undefined;
      const claims = check(token, now - lapsedFor);
      if (claims) {
        if (verified.size >= 10_000) verified.clear();
        verified.set(token, claims);
      }
      return claims;
    },
  };

  function check(token: string, now: number): PlayerClaims | undefined {
    // Exactly what issue() makes: no extra segment, no padding, nothing Buffer would quietly skip.
    const m = TOKEN.exec(token);
    if (!m) return undefined;
    const [, payload = '', signature = ''] = m;
    // The signature's exact characters, not the bytes they decode to: the last of 43 base64url
    // characters carries 2 unused bits, so 4 spellings decode alike. Only the one issued is good.
    const given = Buffer.from(signature);
    // Every secret is tried (no early exit), so the time taken says nothing of which one matched.
    let good = false;
    for (const key of keys) good = timingSafeEqual(given, Buffer.from(signWith(key, payload))) || good;
    if (!good) return undefined;
    try {
      const c = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Partial<PlayerClaims>;
      if (typeof c.userId !== 'string' || typeof c.gamertag !== 'string' || typeof c.exp !== 'number') return undefined;
      const iat = typeof c.iat === 'number' ? c.iat : c.exp - ttlMs;
      if (c.exp <= now) return undefined;
      return { userId: c.userId, gamertag: c.gamertag, exp: c.exp, iat, ...(c.guest === true ? { guest: true as const } : {}) };
    } catch {
      return undefined;
    }
  }
}

export type PlayerTokens = ReturnType<typeof createPlayerTokens>;
