import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { secretList } from './secret-list.js';

/**
 * Unlock proofs: the game's server says "this player unlocked this achievement" in a string the
 * client carries to the relay, which pays only with one that verifies (docs/unlock-proofs.md).
 *
 *   proof   = base64url(payload) "." base64url(HMAC-SHA256(secret, payload))
 *   payload = "rbp1" LF gamertag LF achievementId LF exp LF nonce   (UTF-8, no trailing LF)
 *
 * `exp` is the expiry in whole seconds since the epoch (decimal); `nonce` is 1 to 64 characters
 * of [A-Za-z0-9_-], unique per proof. base64url without padding.
 */

/** The longest proof the relay reads (the rewards route bounds the field by it). */
export const PROOF_MAX_LENGTH = 512;
const DEFAULT_TTL_SECONDS = 600;
/**
 * The longest a proof may be claimed with: a proof whose `exp` lies further ahead is refused.
 * Its nonce is kept this long after it is spent, and then forgotten (the proof has expired).
 */
export const PROOF_MAX_TTL_SECONDS = 30 * 86_400;
/** A game server's clock a little ahead of the relay's does not refuse a proof signed for the longest life. */
const CLOCK_SLACK_SECONDS = 3_600;
const VERSION = 'rbp1';
const NONCE = /^[A-Za-z0-9_-]{1,64}$/;

export interface UnlockGrant {
  gamertag: string;
  achievementId: string;
  /** How long the proof may be claimed with. Default 600 (10 minutes); at most 30 days. */
  ttlSeconds?: number;
}

const mac = (secret: string, payload: string) => createHmac('sha256', secret).update(payload, 'utf8').digest('base64url');

/**
 * Signs an unlock, on the game's server, with the relay's RELAY_GAME_SERVER_SECRET (its first
 * value, when several are given). `now` (ms) and `nonce` are for tests and worked examples.
 */
export function signUnlock(secret: string, grant: UnlockGrant, now = Date.now(), nonce = randomBytes(16).toString('base64url')): string {
  const key = secretList(secret)[0];
  if (!key) throw new Error('signUnlock needs a secret');
  if (/[\n]/.test(grant.gamertag) || /[\n]/.test(grant.achievementId)) throw new Error('signUnlock: no line breaks in a gamertag or achievement id');
  if (!NONCE.test(nonce)) throw new Error('signUnlock: a nonce is 1 to 64 of A-Z a-z 0-9 _ -');
  const ttl = grant.ttlSeconds ?? DEFAULT_TTL_SECONDS;
  if (!Number.isInteger(ttl) || ttl > PROOF_MAX_TTL_SECONDS) throw new Error(`signUnlock: ttlSeconds is a whole number, at most ${PROOF_MAX_TTL_SECONDS} (30 days)`);
  const exp = Math.floor(now / 1000) + ttl;
  const payload = [VERSION, grant.gamertag, grant.achievementId, exp, nonce].join('\n');
  return `${Buffer.from(payload, 'utf8').toString('base64url')}.${mac(key, payload)}`;
}

/** Why a proof is refused: each a stable reason code on the rejected record. */
export type ProofRefusal = 'proof_required' | 'proof_invalid' | 'proof_expired' | 'proof_other_player' | 'proof_other_achievement';

export type ProofCheck = { ok: true; nonce: string } | { ok: false; reason: ProofRefusal };

/**
 * Checks a proof for a claim: signed with one of `secrets` (every one is tried), not expired,
 * naming this player (gamertag, compared case-insensitively: the service treats gamertags so) and
 * this achievement. Single use is the ledger's to enforce, with the nonce returned.
 */
export function checkUnlock(secrets: readonly string[], proof: string | undefined, expect: { gamertag: string; achievementId: string }, now = Date.now()): ProofCheck {
  if (!proof) return { ok: false, reason: 'proof_required' };
  const m = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/.exec(proof);
  if (!m || proof.length > PROOF_MAX_LENGTH) return { ok: false, reason: 'proof_invalid' };
  const payload = Buffer.from(m[1]!, 'base64url').toString('utf8');
  // The exact spelling signed: a payload that does not re-encode to the same characters is not it.
  if (Buffer.from(payload, 'utf8').toString('base64url') !== m[1]) return { ok: false, reason: 'proof_invalid' };
  const given = Buffer.from(m[2]!);
  let good = false;
  for (const key of secrets) good = timingSafeEqual(given, Buffer.from(mac(key, payload))) || good;
  if (!good) return { ok: false, reason: 'proof_invalid' };
  const [version, gamertag, achievementId, exp, nonce, ...rest] = payload.split('\n');
  if (version !== VERSION || rest.length || !gamertag || !achievementId || !/^\d{1,15}$/.test(exp ?? '') || !NONCE.test(nonce ?? '')) return { ok: false, reason: 'proof_invalid' };
  if (Number(exp) * 1000 <= now) return { ok: false, reason: 'proof_expired' };
  // Its nonce is forgotten PROOF_MAX_TTL_SECONDS after it is spent: a proof must be dead by then.
  if (Number(exp) > now / 1000 + PROOF_MAX_TTL_SECONDS + CLOCK_SLACK_SECONDS) return { ok: false, reason: 'proof_invalid' };
  if (gamertag.toLowerCase() !== expect.gamertag.toLowerCase()) return { ok: false, reason: 'proof_other_player' };
  if (achievementId !== expect.achievementId) return { ok: false, reason: 'proof_other_achievement' };
  return { ok: true, nonce: nonce! };
}
