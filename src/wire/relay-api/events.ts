// `GET /v1/events`: the player's event stream, and the ticket that opens it.
import type { RewardRecord } from './rewards.js';

/** `POST /v1/events/ticket`: a single-use pass for `GET /v1/events?ticket=…`, good for `expiresIn` seconds. */
export interface EventStreamTicket {
  ticket: string;
  expiresIn: number;
}

/**
 * One message of `GET /v1/events` (Server-Sent Events; `event:` is the type, `id:` resumes).
 * reward: a RewardRecord changed status (every change the player sees: paid, rejected, failed,
 * needs_review, held for an operator, and a later outcome when a review or a hold is settled;
 * the same record id again). ramp.purchase.completed / ramp.purchase.failed:
 * from the service's webhooks.
 */
export type PlayerEventMessage =
  | { type: 'reward'; data: RewardRecord }
  | { type: 'ramp.purchase.completed'; data: { amount?: string | number; currency?: string; referenceId?: string } }
  | { type: 'ramp.purchase.failed'; data: { referenceId?: string } };
