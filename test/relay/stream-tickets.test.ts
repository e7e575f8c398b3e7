// Finding 6 of issue 34 (the relay's half): the browser opened `GET /v1/events?token=rb1.…`, and
// every access log kept a token good for 24 hours. The stream now opens with a single-use ticket
// good for 60 s, from `POST /v1/events/ticket` (the token in the Authorization header).
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createPlayerTokens } from '../../src/relay/core/player-tokens.js';
import { createStreamTickets } from '../../src/relay/core/stream-tickets.js';
import type { EventStreamTicket } from '../../src/wire/relay-api.js';
import { heldStreams } from '../helpers/held-streams.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';

const relays: TestRelay[] = [];
const streams = heldStreams();
afterEach(async () => {
  streams.closeAll();
  await Promise.all(relays.splice(0).map((r) => r.stop()));
});

async function start(env: Record<string, string> = {}) {
  const relay = await startTestRelay(env);
  relays.push(relay);
  return relay;
}

const ticketFor = async (relay: TestRelay, token: string) => {
  const r = await fetch(`${relay.url}/v1/events/ticket`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
  return { status: r.status, cacheControl: r.headers.get('cache-control'), body: (await r.json()) as EventStreamTicket };
};

/** Opens the stream with `query`: its status, and the problem, or (`read`) the first event's text. */
async function stream(relay: TestRelay, query: string, read = false) {
  const { response: r } = await streams.open(`${relay.url}/v1/events?${query}`);
  const type = r.headers.get('content-type') ?? '';
  if (!type.startsWith('text/event-stream')) return { status: r.status, type, problem: (await r.json()) as { code: string; detail: string } };
  if (!read) return { status: r.status, type };
  const reader = r.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  while (!text.includes('\n\n')) text += (await reader.read()).value ?? '';
  return { status: r.status, type, first: text };
}

describe('event streams open with a single-use ticket, not the token in the URL', () => {
  it('Tokens in logs: POST /v1/events/ticket gives a 60 s ticket; the stream opens with it once; a reused ticket is 401 problem+json', async () => {
    const relay = await start();
    const player = await relay.link('ticketed');
    expect((await relay.claim(player.token, { achievementId: 'first-coin' })).status).toBe(201);

    const t = await ticketFor(relay, player.token);
    expect([t.status, t.cacheControl, t.body.expiresIn]).toEqual([200, 'no-store', 60]);
    expect(t.body.ticket).toMatch(/^rbt1\./);
    expect(t.body.ticket).not.toContain(player.token.split('.')[2]);

    const first = await stream(relay, `ticket=${encodeURIComponent(t.body.ticket)}&lastEventId=0`, true);
    expect([first.status, first.type]).toEqual([200, 'text/event-stream']);
    expect(first.first).toContain('event: reward');
    const again = await stream(relay, `ticket=${encodeURIComponent(t.body.ticket)}`);
    expect([again.status, again.type, again.problem?.code]).toEqual([401, 'application/problem+json', 'unauthorized']);
    expect(again.problem?.detail).toMatch(/used already/);
  });

  it('Tokens in logs: a forged ticket, a token as a ticket, a ticket as a token, a ticket without a token: all 401', async () => {
    const relay = await start();
    const player = await relay.link('forger');
    const { ticket } = (await ticketFor(relay, player.token)).body;
    const [, payload] = ticket.split('.');
    for (const bad of [`rbt1.${payload}.${'A'.repeat(43)}`, player.token, player.token.replace(/^rb1\./, 'rbt1.'), 'rbt1.e30.x']) {
      const r = await stream(relay, `ticket=${encodeURIComponent(bad)}`);
      expect([bad, r.status, r.problem?.code]).toEqual([bad, 401, 'unauthorized']);
    }
    const asToken = await fetch(`${relay.url}/v1/rewards`, { headers: { authorization: `Bearer ${ticket}` } });
    expect(asToken.status).toBe(401);
    expect((await fetch(`${relay.url}/v1/events/ticket`, { method: 'POST' })).status).toBe(401);
    // Only the header mints a ticket: a token in the query does not.
    expect((await fetch(`${relay.url}/v1/events/ticket?token=${encodeURIComponent(player.token)}`, { method: 'POST' })).status).toBe(401);
    // The ticket was never used by any of that: it still opens the stream.
    expect((await stream(relay, `ticket=${encodeURIComponent(ticket)}`)).status).toBe(200);
  });

  it('A HEAD (a proxy or a prefetch probing the URL) checks the ticket and leaves it unused: the EventSource then opens with it', async () => {
    const relay = await start();
    const player = await relay.link('probed');
    const { ticket } = (await ticketFor(relay, player.token)).body;
    const url = `${relay.url}/v1/events?ticket=${encodeURIComponent(ticket)}`;
    for (let i = 0; i < 2; i++) {
      const head = await fetch(url, { method: 'HEAD' });
      expect([head.status, head.headers.get('content-type'), head.headers.get('cache-control')]).toEqual([200, 'text/event-stream', 'no-cache']);
      expect(await head.text()).toBe('');
    }
    expect((await stream(relay, `ticket=${encodeURIComponent(ticket)}`)).status).toBe(200);
    // Used now: a HEAD says so as a GET would, and a forged ticket is refused as well.
    const used = await fetch(url, { method: 'HEAD' });
    expect([used.status, used.headers.get('www-authenticate')]).toEqual([401, 'Bearer realm="rewardbus"']);
    const [, payload] = ticket.split('.');
    expect((await fetch(`${relay.url}/v1/events?ticket=${encodeURIComponent(`rbt1.${payload}.${'A'.repeat(43)}`)}`, { method: 'HEAD' })).status).toBe(401);
  });

  it('Tokens in logs: a ticket works on another relay with the same secret (a load balancer), once there too', async () => {
    const secret = `${randomUUID()}${randomUUID()}`;
    const [a, b] = [await start({ RELAY_SECRET: secret }), await start({ RELAY_SECRET: secret })];
    const player = await a!.link('balanced');
    const { ticket } = (await ticketFor(a!, player.token)).body;
    expect((await stream(b!, `ticket=${encodeURIComponent(ticket)}`)).status).toBe(200);
    expect((await stream(b!, `ticket=${encodeURIComponent(ticket)}`)).status).toBe(401);
  });

  it('Tokens in logs: ?token= still opens the stream (deprecated, for old clients)', async () => {
    const relay = await start();
    const player = await relay.link('old-client');
    expect((await stream(relay, `token=${encodeURIComponent(player.token)}`)).status).toBe(200);
  });

  it('Tokens in logs: a ticket expires after 60 s, or with its token; rotation: NEW,OLD verifies an OLD ticket', () => {
    const t0 = 1_800_000_000_000;
    const player = createPlayerTokens('old-secret', 3_600_000).issue('u1', 'alice', t0).claims;
    const old = createStreamTickets('old-secret');
    const rotated = createStreamTickets('new-secret,old-secret');
    expect(old.redeem(old.issue(player, t0), t0 + 60_001)).toEqual({ refused: 'expired' });
    expect(rotated.redeem(old.issue(player, t0), t0 + 59_999)).toEqual({ player });
    expect(createStreamTickets('new-secret').redeem(old.issue(player, t0), t0)).toEqual({ refused: 'invalid' });
    // A token that lapses in 10 s gives a ticket that lapses with it.
    const short = createPlayerTokens('old-secret', 10_000).issue('u1', 'alice', t0).claims;
    expect(old.redeem(old.issue(short, t0), t0 + 10_001)).toEqual({ refused: 'expired' });
  });
});
