import { Hono } from 'hono';
import type { ReferralCodeResponse } from '../../../wire/relay-api.js';
import type { Referrals } from '../../core/referrals.js';
import type { RelayEnv } from '../context.js';
import { RelayProblem } from '../problems.js';

/** `GET /v1/referral-code` (player token): the player's own referral code, made at the first ask and the same ever after. */
export function referralCodeRoute(code: Referrals['code']) {
  return new Hono<RelayEnv>().get('/', async (c) => {
    const player = c.get('player');
    // A guest has no userId of its own to be referred to: it links a gamertag first.
    if (player.guest) throw new RelayProblem('gamertag_required', 'A guest has no referral code: link a gamertag first');
    c.header('Cache-Control', 'private, no-cache');
    return c.json({ code: await code(player.userId) } satisfies ReferralCodeResponse);
  });
}
