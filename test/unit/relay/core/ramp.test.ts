// Ramp sessions (core/ramp.ts): where the service's webhooks go and whose purchase they are come
// from the relay, never from the request; a refusal is in our words; nothing is kept unless opened.
import { describe, expect, it } from 'vitest';
import type { RampSessionData, RampWidgetBody } from '../../../../src/contract/payments-api.js';
import { createRamp } from '../../../../src/relay/core/ramp.js';
import { Refusal } from '../../../../src/relay/core/refusal.js';
import type { Outcome } from '../../../../src/relay/payments/client.js';

const SESSION: RampSessionData = { session_token: 'st', widget_url: 'https://widget/1', session_id: 'sid', expires_at: '2026-11-25T22:15:00.000Z' };

/** `publicUrl: null`: none configured. */
function rampWith(answer: Outcome<RampSessionData>, publicUrl: string | null = 'https://relay.example.com') {
  const sent: RampWidgetBody[] = [];
  const kept: unknown[][] = [];
  const logged: string[] = [];
  const open = createRamp({
    payments: {
      rampWidget: async (body) => {
        sent.push(body);
        return answer;
      },
    },
    events: { rememberRampSession: async (...args) => void kept.push(args) },
    publicUrl: publicUrl ?? undefined,
    logger: { error: (o: object) => void logged.push((o as { event: string }).event), info: (o: object) => void logged.push((o as { event: string }).event) },
  });
  return { open, sent, kept, logged };
}

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => expect.unreachable('not refused'),
    (e: unknown) => {
      expect(e).toBeInstanceOf(Refusal);
      return [(e as Refusal).code, (e as Refusal).detail, (e as Refusal).retryAfterSeconds];
    },
  );

describe('a ramp session', () => {
  it('sends the webhooks to the configured address under a reference of the relay’s own, and keeps it for this player', async () => {
    const { open, sent, kept } = rampWith({ kind: 'ok', data: SESSION });
    const session = await open('u-1', { email: 'a@b.co', quoteCurrency: 'USD', referenceId: 'game-7', metadata: { level: 3, userId: 'someone-else' } });
    expect(session).toEqual({ sessionToken: 'st', widgetUrl: 'https://widget/1', expiresAt: SESSION.expires_at });
    const body = sent[0]!;
    expect(body).toMatchObject({ email: 'a@b.co', quote_currency: 'USD', webhook_url: 'https://relay.example.com/v1/webhooks/payments' });
    expect(body.reference_id).toMatch(/^rb_[0-9a-f-]{36}$/);
    // The player is the token's, whatever the metadata says.
    expect(body.metadata).toEqual({ level: 3, gameReferenceId: 'game-7', userId: 'u-1' });
    expect(kept).toEqual([[body.reference_id, 'u-1', 'sid', Date.parse(SESSION.expires_at)]]);
  });

  it('without the relay’s public URL: service_unavailable, logged, and the service is not asked', async () => {
    const { open, sent, logged } = rampWith({ kind: 'ok', data: SESSION }, null);
    expect(await codeOf(open('u-1', { email: 'a@b.co' }))).toEqual(['service_unavailable', 'Ramp sessions are not configured on this relay', undefined]);
    expect(sent).toEqual([]);
    expect(logged).toEqual(['ramp_unavailable']);
  });

  it('refused by the service: bad_request in our words, never the service’s; nothing kept', async () => {
    const email = rampWith({ kind: 'refused', status: 400, message: '<b>raw</b>', code: 'INVALID_EMAIL' });
    expect(await codeOf(email.open('u-1', { email: 'a@b.co' }))).toEqual(['bad_request', 'The payments service did not accept this email address', undefined]);
    expect(email.kept).toEqual([]);
    const other = rampWith({ kind: 'refused', status: 422, message: '<b>raw</b>' });
    expect(await codeOf(other.open('u-1', { email: 'a@b.co' }))).toEqual(['bad_request', 'The payments service did not accept this request', undefined]);
  });

  it('the service out of reach, or refusing the relay’s key: service_unavailable, come back in 5 s', async () => {
    for (const answer of [
      { kind: 'refused', status: 401, message: 'key' },
      { kind: 'refused', status: 500, message: 'oops' },
      { kind: 'unavailable', reason: 'timeout' },
    ] as const) {
      const r = rampWith(answer);
      expect(await codeOf(r.open('u-1', { email: 'a@b.co' }))).toEqual(['service_unavailable', undefined, 5]);
      expect(r.kept).toEqual([]);
    }
  });
});
