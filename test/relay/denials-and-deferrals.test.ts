// What a denial and a too-early claim leave behind, as an attacker found it (issue 34, findings 4
// and 5), over real HTTP with the sandbox as the payments service, on SQLite and PostgreSQL: a
// denied claim was claimed again at once (a new held entry each time), the held table did not say
// who was to be paid, and too-early claims piled up as deferred rows for ever.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import type { CatalogEntry } from '../../src/relay/index.js';
import { relayBackends } from '../helpers/backends.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';

const postgresUrl = inject('postgresUrl');
const dir = mkdtempSync(join(tmpdir(), 'rewardbus-denials-'));
const DAY = 86_400_000;

const ACHIEVEMENTS: CatalogEntry[] = [
  { id: 'golden', title: 'Golden trophy', sats: 30, repeat: { kind: 'cooldown', seconds: 0 }, hold: true },
  { id: 'marathon', title: 'Marathon', sats: 40, repeat: { kind: 'cooldown', seconds: 0 }, minPlaySeconds: 3600 },
];
const CATALOG = join(dir, 'catalog.json');
writeFileSync(CATALOG, JSON.stringify({ achievements: ACHIEVEMENTS }));

const BACKENDS = relayBackends(postgresUrl);

const relays: TestRelay[] = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(relays.splice(0).map((r) => r.stop()));
});
async function start(env: Record<string, string>, dataDir?: string) {
  const relay = await startTestRelay({ RELAY_CATALOG: CATALOG, ...env }, {}, dataDir);
  relays.push(relay);
  return relay;
}

const admin = async (relay: TestRelay, path: string, method = 'GET') => {
  const r = await fetch(`${relay.url}/admin/api${path}`, { method, headers: { authorization: `Bearer ${relay.adminToken}`, 'x-operator': 'ops-ann' } });
  return { status: r.status, body: (await r.json()) as { entries: Array<Record<string, unknown>> } };
};
/** The relay's calls to the payments service for payouts (gamertag lookups and payments), from its own metrics. */
async function payoutCalls(relay: TestRelay): Promise<number> {
  const text = await (await fetch(`${relay.url}/metrics`, { headers: { authorization: `Bearer ${relay.adminToken}` } })).text();
  const count = (call: string) => Number(new RegExp(`^rewardbus_service_call_seconds_count\\{call="${call}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
  return count('gamertag') + count('send_payment');
}

/** The attacker's loop: claim under a new key; whenever it is held, the operator denies it. */
async function denyThenClaim(relay: TestRelay, token: string, cycles: number) {
  const answers: string[] = [];
  for (let i = 0; i < cycles; i++) {
    const r = await relay.claim(token, { achievementId: 'golden' });
    expect(r.status).toBe(201);
    answers.push(r.body.reason ? `${r.body.status} ${r.body.reason}` : r.body.status);
    if (r.body.status === 'held') expect((await admin(relay, `/review/${r.body.id}/deny`, 'POST')).status).toBe(200);
  }
  return answers;
}

describe.each(BACKENDS)('denials and deferrals on $name', (backend) => {
  it('a denied claim cannot be claimed again for RELAY_DENIAL_COOLDOWN_HOURS: 15 deny-then-claim cycles make one held entry, no call to the service', async () => {
    const relay = await start(await backend.env());
    const player = await relay.link('ada');
    const other = await relay.link('grace');
    const answers = await denyThenClaim(relay, player.token, 15);
    expect(answers).toEqual(['held', ...Array(14).fill('rejected denied_recently')]);
    expect(await payoutCalls(relay)).toBe(0);
    expect(relay.sandbox!.payments()).toEqual([]);
    // Only that player, only that achievement: another player's claim is held as before.
    expect((await relay.claim(other.token, { achievementId: 'golden' })).body.status).toBe('held');
    expect((await admin(relay, '/held')).body.entries.map((e) => e.gamertag)).toEqual(['grace']);
    // After the cooldown the player may ask again: the ledger contract runs that clock (test/relay/ledger-contract.ts).
  });

  it('RELAY_DENIAL_COOLDOWN_HOURS=0 turns it off: each deny-then-claim cycle is held again', async () => {
    const relay = await start({ ...(await backend.env()), RELAY_DENIAL_COOLDOWN_HOURS: '0' });
    const player = await relay.link('ada');
    expect(await denyThenClaim(relay, player.token, 3)).toEqual(['held', 'held', 'held']);
  });

  it('the held table shows the gamertag the claim was made with, not "? (userId)"', async () => {
    const relay = await start(await backend.env());
    const player = await relay.link('ada');
    const held = await relay.claim(player.token, { achievementId: 'golden' });
    expect(held.body.status).toBe('held');
    const { body } = await admin(relay, '/held');
    expect(body.entries).toMatchObject([{ id: held.body.id, userId: player.userId, gamertag: 'ada' }]);
    // Approved and paid: the payment records the gamertag it paid.
    const approved = await admin(relay, `/review/${held.body.id}/approve`, 'POST');
    expect(approved.body).toMatchObject({ entry: { state: 'paid', gamertag: 'ada' } });
  });

  it('too-early claims accumulate no deferred rows: one row per key, updated; 300 keys pruned a day after their last claim', async () => {
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    const env = await backend.env();
    let relay = await start(env);
    const player = await relay.link('ada');
    const deferred = async () => (await admin(relay, `/recent?player=${encodeURIComponent(player.userId)}`)).body.entries.filter((e) => e.state === 'deferred');
    // The same key, again and again: one row.
    const key = randomUUID();
    for (let i = 0; i < 20; i++) expect((await relay.claim(player.token, { achievementId: 'marathon' }, key)).status).toBe(425);
    expect(await deferred()).toHaveLength(1);
    // A new key each time: a row each, 300 of them.
    for (let i = 0; i < 30; i++) {
      const batch = await Promise.all(Array.from({ length: 10 }, () => relay.claim(player.token, { achievementId: 'marathon' })));
      expect(batch.map((r) => r.status)).toEqual(Array(10).fill(425));
    }
    expect((await admin(relay, `/recent?player=${encodeURIComponent(player.userId)}`)).body.entries).toHaveLength(100);
    // A day later the relay prunes (at start, and hourly): they held nothing, and are gone.
    vi.setSystemTime(Date.now() + DAY + 60_000);
    const dataDir = relay.dataDir;
    relays.splice(relays.indexOf(relay), 1);
    await relay.close({ graceMs: 0 });
    relay = await start(env, dataDir);
    await vi.waitFor(() => expect(relay.logs.find((l) => l.includes('"event":"pruned"'))).toContain('"rows":301,'), { timeout: 10_000 });
    expect(await deferred()).toEqual([]);
    // The first key, claimed again (with a new token), is decided as new: one deferred row again.
    const again = await relay.link('ada');
    expect((await relay.claim(again.token, { achievementId: 'marathon' }, key)).status).toBe(425);
    expect(await deferred()).toHaveLength(1);
  });
});
