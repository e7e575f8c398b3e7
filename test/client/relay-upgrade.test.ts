import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryStorage } from '../../src/client/node.js';
import { DEFAULT_CATALOG } from '../../src/relay/index.js';
import { busMaker, next } from '../helpers/client.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';

/** The address the game is built with: a proxy in front of whichever relay runs now. */
const RELAY_URL = 'http://relay.example';
let relay: TestRelay | undefined;
let dataDir: string | undefined;
const { bus, destroyAll } = busMaker(() => RELAY_URL, memoryStorage);
afterEach(async () => {
  destroyAll();
  await relay?.stop();
  relay = undefined;
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  dataDir = undefined;
});

/** A proxy to the relay running now; `offline` while it is being replaced; `loseNextClaim`: the claim reaches the relay, its answer is lost. */
function proxy() {
  const p = {
    offline: false,
    loseNextClaim: false,
    fetch: (async (input: RequestInfo | URL, init?: RequestInit) => {
      if (p.offline) throw new TypeError('fetch failed');
      const res = await fetch(String(input).replace(RELAY_URL, relay!.url), init);
      if (p.loseNextClaim && String(input).endsWith('/v1/rewards') && init?.method === 'POST') {
        p.loseNextClaim = false;
        p.offline = true;
        await res.text();
        throw new TypeError('fetch failed: timeout');
      }
      return res;
    }) as typeof fetch,
  };
  return p;
}

describe('a relay upgraded while a claim is on its way', () => {
  it('says a claim paid before the upgrade paid, though the new catalog no longer has its achievement', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'rewardbus-upgrade-'));
    const gem = { id: 'gem', title: 'Gem', sats: 7, repeat: { kind: 'once' as const } };
    relay = await startTestRelay({}, { relay: { catalog: [...DEFAULT_CATALOG, gem] } }, dataDir);
    const net = proxy();
    const b = bus({ fetch: net.fetch });
    await b.link('alice');
    const outcomes: string[] = [];
    for (const e of ['reward:paid', 'reward:rejected', 'reward:failed', 'reward:review'] as const) b.on(e, (o) => outcomes.push(`${e} ${o.reason ?? ''}`.trim()));
    net.loseNextClaim = true;
    const id = b.unlock('gem');
    await next(b, 'relay:offline');
    const paidBefore = relay.sandbox!.payments();
    expect(paidBefore).toHaveLength(1);
    // The next release drops (or renames) the achievement; same ledger, same secret.
    await relay.close({ graceMs: 0 });
    relay = await startTestRelay({}, {}, dataDir);
    dataDir = undefined;
    net.offline = false;
    const heard = new Promise<void>((resolve) => {
      const done = () => resolve();
      for (const e of ['reward:paid', 'reward:rejected', 'reward:failed', 'reward:review'] as const) b.once(e, done);
    });
    void b.flush();
    await heard;
    // Before, the relay answered the key's retry 404 unknown_achievement without looking for it:
    // the player, paid 7 sats, was told the reward was rejected.
    expect(outcomes).toEqual(['reward:paid']);
    expect(b.pending().map((i) => i.id)).not.toContain(id);
    expect(relay.sandbox!.payments()).toHaveLength(0);
  });
});

describe('a relay whose catalog the next release grew', () => {
  it('queues an achievement the stored catalog does not know yet while the relay is out of reach, and it is paid once back', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'rewardbus-upgrade-'));
    relay = await startTestRelay({}, {}, dataDir);
    const storage = memoryStorage();
    const net = proxy();
    // Last session, on the old release: the demo's catalog stored on this device.
    const before = bus({ fetch: net.fetch, storage });
    await before.link('alice');
    await before.catalog();
    before.destroy();
    await relay.close({ graceMs: 0 });
    const gem = { id: 'gem', title: 'Gem', sats: 7, repeat: { kind: 'once' as const } };
    relay = await startTestRelay({}, { relay: { catalog: [...DEFAULT_CATALOG, gem] } }, dataDir);
    dataDir = undefined;
    // The game's new release, which unlocks gem, starts where the relay cannot be reached.
    net.offline = true;
    const b = bus({ fetch: net.fetch, storage });
    await b.ready;
    const skipped: string[] = [];
    b.on('reward:skipped', (s) => skipped.push(s.reason));
    const paid = next(b, 'reward:paid');
    const id = b.unlock('gem');
    // Before: skipped as unknown_achievement by the catalog of the last release: never sent.
    expect(skipped).toEqual([]);
    expect(id).toBeDefined();
    net.offline = false;
    void b.flush();
    expect((await paid).intent.id).toBe(id);
    expect(relay.sandbox!.payments()).toHaveLength(1);
  });
});
