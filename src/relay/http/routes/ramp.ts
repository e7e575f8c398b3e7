import { Hono } from 'hono';
import { z } from 'zod';
import type { OpenRampSession } from '../../core/ramp.js';
import { type RelayEnv, readJson } from '../context.js';

const rampSchema = z.strictObject({
  email: z.email(),
  destination: z.string().min(1).max(200).optional(),
  quoteCurrency: z
    .string()
    .regex(/^[A-Z]{3}$/)
    .optional(),
  baseCurrency: z
    .string()
    .regex(/^[A-Z]{3,4}$/)
    .optional(),
  referenceId: z.string().min(1).max(100).optional(),
  metadata: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
});

/** `POST /v1/ramp-sessions`: a session token for the service's buy-sats widget (core/ramp.ts). */
export function rampRoute(openRampSession: OpenRampSession) {
  return new Hono<RelayEnv>().post('/', async (c) => {
    const player = c.get('player');
    const body = await readJson(c, rampSchema);
    return c.json(await openRampSession(player.userId, body), 201);
  });
}
