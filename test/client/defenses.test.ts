// The relay's defenses against bots, from an honest game's side: witnessed play (425 too_early),
// unlock proofs from the game's server, and claims held for an operator. Against a real relay.
import { describe, expect, it } from 'vitest';
import { memoryStorage, type RewardBus, type RewardOutcome } from '../../src/client/node.js';
import { DEFAULT_CATALOG, signUnlock } from '../../src/relay/index.js';
import type { CatalogEntry } from '../../src/wire/relay-api.js';
import { busesOnTestRelay, controlledFetch, next } from '../helpers/client.js';

const { bus, start } = busesOnTestRelay(memoryStorage);

const ADMIN = 'operator-token-of-at-least-32-characters';
const SECRET = 'game-server-secret-of-at-least-32-chars';
const LEVEL: CatalogEntry = { id: 'level-complete', title: 'Level complete', sats: 100, repeat: { kind: 'once' }, minPlaySeconds: 1 };
/** What an honest player should never hear on the way to being paid. */
function listenForTrouble(b: RewardBus): string[] {
  const heard: string[] = [];
  for (const e of ['reward:rejected', 'reward:failed', 'reward:review', 'reward:held', 'error'] as const) b.on(e, () => heard.push(e));
  return heard;
}
const catalog = (...extra: CatalogEntry[]) => ({ relay: { catalog: [...DEFAULT_CATALOG.filter((a) => a.id === 'first-coin'), ...extra] } });

describe('the relay defenses, for an honest player', () => {
  it('keeps an unlock the relay calls too early (425), claims it again at retryAt with the same key, and pays it once', async () => {
    const relay = await start({}, catalog(LEVEL));
    const net = controlledFetch();
    const b = bus({ fetch: net.fetch });
    const heard = listenForTrouble(b);
    const sentAt: number[] = [];
    b.on('reward:sent', () => sentAt.push(Date.now()));
    // Unlocked before the player is linked: the bus cannot know when the session begins.
    const id = b.unlock('level-complete')!;
    const waiting = next(b, 'reward:waiting');
    const paid = next(b, 'reward:paid');
    await b.link('alice');
    const w = await waiting;
    expect(w).toMatchObject({ intent: { id }, reason: 'too_early' });
    if (w.reason !== 'too_early') return;
    expect(net.claims.get(id)).toBe(1);
    expect(b.pending().map((i) => i.id)).toEqual([id]);
    expect(relay.sandbox!.payments()).toHaveLength(0);

    expect((await paid).intent.id).toBe(id);
    expect(net.claims.get(id)).toBe(2);
    expect(sentAt[1]).toBeGreaterThanOrEqual(w.retryAt);
    expect(sentAt[1]! - w.retryAt).toBeLessThan(500);
    expect(relay.sandbox!.payments()).toHaveLength(1);
    expect(b.pending()).toEqual([]);
    expect(heard).toEqual([]);
  });

  it('waits for the play time the catalog asks, from the link, instead of being told too early', async () => {
    const relay = await start({}, catalog(LEVEL));
    const net = controlledFetch();
    const b = bus({ fetch: net.fetch });
    const heard = listenForTrouble(b);
    const sentAt: number[] = [];
    b.on('reward:sent', () => sentAt.push(Date.now()));
    const before = Date.now();
    await b.link('alice');
    const waits: number[] = [];
    b.on('reward:waiting', (e) => waits.push(e.reason === 'too_early' ? e.retryAt : Number.NaN));
    const paid = next(b, 'reward:paid');
    const id = b.unlock('level-complete')!;
    // Said at once, due a second after the link answered.
    expect(waits).toHaveLength(1);
    expect(waits[0]! - before).toBeGreaterThanOrEqual(1000);
    expect(waits[0]! - Date.now()).toBeLessThanOrEqual(1000);
    expect((await paid).intent.id).toBe(id);
    expect(net.claims.get(id)).toBe(1);
    expect(sentAt[0]).toBeGreaterThanOrEqual(waits[0]!);
    expect(relay.sandbox!.payments()).toHaveLength(1);
    expect(heard).toEqual([]);
  });

  it("sends the game server's proof with the claim, and the same proof with a retry", async () => {
    const relay = await start({ RELAY_GAME_SERVER_SECRET: SECRET }, catalog({ id: 'boss', title: 'Boss defeated', sats: 50, repeat: { kind: 'once' }, proof: 'server' }));
    const net = controlledFetch();
    const b = bus({ fetch: net.fetch });
    await b.link('alice');
    const proof = signUnlock(SECRET, { gamertag: 'alice', achievementId: 'boss' });
    // The relay pays, the answer is lost: the retry must replay, not spend the proof again.
    net.loseNext = 1;
    const paid = next(b, 'reward:paid');
    const id = b.unlock('boss', { level: 3 }, { proof })!;
    const outcome = await paid;
    expect(outcome.intent).toMatchObject({ id, proof, details: { level: 3 } });
    expect(net.claims.get(id)).toBe(2);
    expect(relay.sandbox!.payments()).toHaveLength(1);
    expect((await b.history()).map((r) => r.status)).toEqual(['paid']);
  });

  it('says a reward held for an operator, keeps it out of the queue, and says its approval once, from the history', async () => {
    const relay = await start({ RELAY_ADMIN_TOKEN: ADMIN }, catalog({ id: 'jackpot', title: 'Jackpot', sats: 200, repeat: { kind: 'once' }, hold: true }));
    const b = bus();
    await b.link('alice');
    const said: Array<[string, RewardOutcome]> = [];
    for (const e of ['reward:held', 'reward:paid', 'reward:review'] as const) b.on(e, (o) => said.push([e, o]));
    const held = next(b, 'reward:held');
    const id = b.unlock('jackpot')!;
    expect(await held).toMatchObject({ intent: { id }, sats: 200, record: { status: 'held' }, remote: false });
    expect(b.pending()).toEqual([]);
    expect(relay.sandbox!.payments()).toHaveLength(0);

    const recordId = (await held).record!.id;
    const r = await fetch(`${relay.url}/admin/api/review/${recordId}/approve`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'x-operator': 'ops' } });
    expect(r.status).toBe(200);
    const paid = next(b, 'reward:paid');
    await b.history(); // Node 20 has no EventSource: the history brings the outcome
    expect(await paid).toMatchObject({ intent: { id }, sats: 200, afterReview: true, afterHold: true });
    await b.history();
    expect(said.map(([e]) => e)).toEqual(['reward:held', 'reward:paid']);
    expect(relay.sandbox!.payments()).toHaveLength(1);
  });
});
