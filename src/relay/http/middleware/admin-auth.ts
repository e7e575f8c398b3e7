import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { secretList } from '../../core/secret-list.js';
import { DEFAULTS } from '../../settings/schema.js';
import { clientKey, type RelayEnv } from '../context.js';
import { RelayProblem } from '../problems.js';

const digest = (s: string) => createHash('sha256').update(s).digest();

export interface AdminAuthOptions {
  /**
   * Wrong tokens per address per minute (RELAY_ADMIN_FAILURES_PER_MINUTE, default 10). Past it,
   * the address waits out the minute (429). Right tokens never count.
   */
  failuresPerMinute?: number;
  /** The clock (tests). */
  now?: () => number;
  /** What a refusal says is required (default: the operator token). */
  required?: string;
}

/**
 * The operator's surface: `Authorization: Bearer <token>`, compared in constant time (as digests,
 * so the length leaks nothing either) with every token configured (comma-separated to rotate:
 * NEW,OLD), and a brute-force limit of its own.
 *
 * Only failures count, so a scraper or the page, however often it calls with the right token, is
 * never refused. An address over its failures is refused before its token is looked at, the right
 * one too: otherwise each guess would still be an answer (401 or 200) and the limit no limit.
 */
export function requireAdmin(tokens: string | readonly string[], options: AdminAuthOptions = {}): MiddlewareHandler<RelayEnv> {
  const expected = secretList(tokens).map(digest);
  if (!expected.length) throw new Error('requireAdmin needs a token');
  const limit = Math.max(1, options.failuresPerMinute ?? DEFAULTS.adminFailuresPerMinute);
  const now = options.now ?? Date.now;
  const failures = createFailureCounter(limit, now);
  return async function requireAdmin(c, next) {
    // No address known (no socket, no clientAddress option): not counted, rather than every
    // caller in one bucket that a stranger's guesses would lock the operator out of.
    const address = clientKey(c);
    const wait = address === undefined ? 0 : failures.waitFor(address);
    if (wait > 0) throw new RelayProblem('rate_limited', `Too many wrong operator tokens from this address: try again in ${wait} s`, { 'Retry-After': `${wait}` });
    const auth = c.req.header('authorization') ?? '';
    const given = auth.startsWith('Bearer ') ? auth.slice(7).trim() : '';
    const mine = digest(given);
    // Every token is compared (no early exit): the time taken says nothing of which one matched.
    let good = false;
    for (const e of expected) good = timingSafeEqual(mine, e) || good;
    if (!given || !good) {
      if (address !== undefined) failures.add(address);
      throw new RelayProblem('unauthorized', options.required ?? 'The operator token (RELAY_ADMIN_TOKEN) is required');
    }
    await next();
  };
}

/** Failures per key in fixed one-minute windows, swept as it goes. */
function createFailureCounter(limit: number, now: () => number, windowMs = 60_000) {
  const windows = new Map<string, { start: number; count: number }>();
  let sweptAt = 0;
  const current = (key: string, t: number) => {
    const w = windows.get(key);
    return w && t - w.start < windowMs ? w : undefined;
  };
  return {
    /** 0 when the key may try; otherwise the seconds until it may. */
    waitFor(key: string): number {
      const t = now();
      const w = current(key, t);
      return w && w.count >= limit ? Math.max(1, Math.ceil((w.start + windowMs - t) / 1000)) : 0;
    },
    add(key: string): void {
      const t = now();
      if (t - sweptAt > windowMs) {
        for (const [k, w] of windows) if (t - w.start >= windowMs) windows.delete(k);
        sweptAt = t;
      }
      const w = current(key, t);
      if (w) w.count++;
      else windows.set(key, { start: t, count: 1 });
    },
  };
}

/** How long an operator's name may be in the audit trail, in characters. */
const MAX_OPERATOR_NAME = 64;

/**
 * The operator's name from `X-Operator`, for the audit trail. A browser cannot send a header
 * outside Latin-1 (李雷 makes fetch throw), so the page sends it percent-encoded: RFC 8187's
 * `UTF-8''%E6%9D%8E%E9%9B%B7`, or plain `encodeURIComponent` output. Raw UTF-8 bytes (curl) are
 * read as such too. Control characters are dropped, the length is bounded; 'operator' when empty.
 */
export function operatorName(header: string | undefined): string {
  let name = (header ?? '').slice(0, 16 * MAX_OPERATOR_NAME).trim();
  const extended = /^utf-8''(.*)$/is.exec(name);
  if (extended) name = percentDecoded(extended[1]!) ?? '';
  else if (/%[0-9a-f]{2}/i.test(name)) name = percentDecoded(name) ?? name;
  else if (/[\x80-\xff]/.test(name)) name = utf8FromLatin1(name) ?? name;
  name = name.replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, '').trim();
  return [...name].slice(0, MAX_OPERATOR_NAME).join('').trim() || 'operator';
}

function percentDecoded(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

/** Node reads header bytes as Latin-1: UTF-8 sent raw arrives as its bytes, one character each. */
function utf8FromLatin1(s: string): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(s, 'latin1'));
  } catch {
    return undefined;
  }
}
