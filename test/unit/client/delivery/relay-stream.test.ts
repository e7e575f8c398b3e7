import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PlayerStream } from '../../../../src/client/delivery/relay-stream.js';
import { fakeEventSources as sources } from '../../../helpers/fake-event-source.js';

const relay = {
  eventTicket: async () => ({ ok: true as const, status: 200, body: { ticket: 'ticket', expiresIn: 30 } }),
  eventsUrl: (ticket: string) => `http://relay.test/v1/events?ticket=${ticket}`,
  eventsUrlWithToken: (token: string) => `http://relay.test/v1/events?token=${token}`,
};

describe('a player stream whose every connection is cut as it opens', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('says `missed` once a period, not per reconnection, and after the period for the gaps within it', async () => {
    const { Source, made } = sources();
    const missed = vi.fn();
    const stream = new PlayerStream(relay, { reward() {}, completed() {}, failed() {}, missed }, Source);
    stream.open({ userId: 'u1', gamertag: 'alice', token: 't1', expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
    // Ten connections, each opened and cut at once; reconnections wait up to 1 s.
    for (let i = 0; i < 10; i++) {
      await vi.waitFor(() => expect(made).toHaveLength(i + 1));
      made[i]!.dispatchEvent(new Event('open'));
      made[i]!.dispatchEvent(new Event('error'));
      await vi.advanceTimersByTimeAsync(1_000);
    }
    // The first connection follows no gap; the second reads what the first cut may have missed.
    expect(missed).toHaveBeenCalledTimes(1);
    // The eleventh stays open: the gaps since the first read are read once the period has passed.
    await vi.waitFor(() => expect(made).toHaveLength(11));
    made[10]!.dispatchEvent(new Event('open'));
    await vi.advanceTimersByTimeAsync(30_000);
    expect(missed).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(missed).toHaveBeenCalledTimes(2);
    stream.close();
  });

  it('still reads a gap held back for the period when the token is renewed meanwhile (the new connection resumes after an event heard since)', async () => {
    const { Source, made } = sources();
    const missed = vi.fn();
    const stream = new PlayerStream(relay, { reward() {}, completed() {}, failed() {}, missed }, Source);
    const alice = { userId: 'u1', gamertag: 'alice', token: 't1', expiresAt: new Date(Date.now() + 3_600_000).toISOString() };
    stream.open(alice);
    // Two gaps: the first read at once, the second held back for the period.
    for (let i = 0; i < 3; i++) {
      await vi.waitFor(() => expect(made).toHaveLength(i + 1));
      made[i]!.dispatchEvent(new Event('open'));
      if (i < 2) made[i]!.dispatchEvent(new Event('error'));
      await vi.advanceTimersByTimeAsync(1_000);
    }
    expect(missed).toHaveBeenCalledTimes(1);
    // The third connection hears an event, then the token is renewed: the next connection resumes after it.
    made[2]!.dispatchEvent(new MessageEvent('reward', { data: JSON.stringify({ id: 'r1', status: 'paid' }), lastEventId: '9' }));
    stream.renewed({ ...alice, token: 't2' });
    await vi.waitFor(() => expect(made).toHaveLength(4));
    made[3]!.dispatchEvent(new Event('open'));
    await vi.advanceTimersByTimeAsync(60_000);
    expect(missed).toHaveBeenCalledTimes(2);
    stream.close();
  });
});
