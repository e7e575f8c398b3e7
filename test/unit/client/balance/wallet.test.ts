import { afterEach, describe, expect, it, vi } from 'vitest';
import { HEARTBEAT_MS, Wallet, type WalletParts } from '../../../../src/client/balance/index.js';
import type { PlayerSession } from '../../../../src/wire/relay-api.js';

const player: PlayerSession = { userId: 'u1', gamertag: 'ada', token: 'tok', expiresAt: '2999-01-01T00:00:00.000Z' };

/** A page whose visibility the test sets, as `document`. */
function page(state: 'visible' | 'hidden') {
  const doc = Object.assign(new EventTarget(), { visibilityState: state });
  vi.stubGlobal('document', doc);
  return {
    set(s: 'visible' | 'hidden') {
      doc.visibilityState = s;
      doc.dispatchEvent(new Event('visibilitychange'));
    },
  };
}

function wallet(credits = true) {
  const beats: string[] = [];
  const parts: WalletParts = {
    relay: {
      play: async (token) => {
        beats.push(token);
        return { ok: true, status: 200, body: { playSeconds: 0 } };
      },
      balance: async () => ({ ok: true, status: 200, body: { sats: 0, withdrawableSats: 0, minWithdrawalSats: 100, withdrawnTodaySats: 0, resetsAt: '' } }),
      withdraw: async () => ({ ok: false, status: 0, unreachable: true }),
    },
    player: () => player,
    session: async () => player,
    expire: () => undefined,
    waitsForLink: () => false,
    emit: () => undefined,
    credits: () => credits,
    retry: undefined,
  };
  return { w: new Wallet(parts), beats };
}

afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

describe('play heartbeats (balance mode)', () => {
  it('are sent every 20 s while the page is visible, none while it is hidden, and none after stop()', async () => {
    vi.useFakeTimers();
    const p = page('hidden');
    const { w, beats } = wallet();
    await vi.advanceTimersByTimeAsync(3 * HEARTBEAT_MS);
    expect(beats).toEqual([]);
    p.set('visible');
    expect(beats).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(2 * HEARTBEAT_MS);
    expect(beats).toHaveLength(3);
    p.set('hidden');
    await vi.advanceTimersByTimeAsync(3 * HEARTBEAT_MS);
    expect(beats).toHaveLength(3);
    p.set('visible');
    expect(beats).toHaveLength(4);
    w.stop();
    await vi.advanceTimersByTimeAsync(3 * HEARTBEAT_MS);
    p.set('visible');
    expect(beats).toHaveLength(4);
  });

  it('are not sent when the catalog credits nothing', async () => {
    vi.useFakeTimers();
    page('visible');
    const { w, beats } = wallet(false);
    await vi.advanceTimersByTimeAsync(3 * HEARTBEAT_MS);
    expect(beats).toEqual([]);
    w.stop();
  });
});
