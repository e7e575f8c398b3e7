import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { memoryStorage } from '../../src/client/node.js';
import { busMaker, next } from '../helpers/client.js';
import { stop } from '../helpers/processes.js';
import { startRelayCommand } from '../helpers/relay-command.js';

// The relay in a process of its own, on the right time; the game (this process) on a clock two
// days ahead, as a player who moved it forward to skip a game's timers has it.
const dir = mkdtempSync(join(tmpdir(), 'rewardbus-clock-'));
const catalog = join(dir, 'catalog.json');
writeFileSync(catalog, JSON.stringify([{ id: 'level-complete', title: 'Level complete', sats: 100, repeat: { kind: 'once' }, minPlaySeconds: 1 }]));
let relayUrl = '';
const { bus, destroyAll } = busMaker(() => relayUrl, memoryStorage);
afterEach(() => {
  destroyAll();
  vi.useRealTimers();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Counts the links (`POST /v1/players`) the game makes. */
function countingLinks() {
  const c = {
    links: 0,
    fetch: (async (input: RequestInfo | URL, init?: RequestInit) => {
      if (new URL(String(input)).pathname === '/v1/players' && init?.method === 'POST') c.links++;
      return fetch(input, init);
    }) as typeof fetch,
  };
  return c;
}

describe('a device whose clock is ahead of the relay’s by more than a token’s life', () => {
  it('claims with the token the relay gave until the relay refuses it, and is paid an achievement that needs play time', async () => {
    const { child, url } = await startRelayCommand({ RELAY_DATA_DIR: join(dir, 'data'), RELAY_CATALOG: catalog, RELAY_RATE_LIMIT_PER_MINUTE: '0' });
    relayUrl = url;
    try {
      vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
      vi.setSystemTime(Date.now() + 2 * 24 * 3_600_000);
      const net = countingLinks();
      const b = bus({ fetch: net.fetch });
      await b.link('alice');
      const paid = next(b, 'reward:paid');
      b.unlock('level-complete');
      // Before, every token looked lapsed here on arrival: each claim linked again first, and the
      // new session's play time started at 0 again, so the relay answered 425 too_early forever.
      expect((await paid).sats).toBe(100);
      // The link, and one renewal, which came lapsed too: this clock cannot tell a token's age.
      expect(net.links).toBe(2);
    } finally {
      await stop(child);
    }
  });
});
