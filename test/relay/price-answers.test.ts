// What the BTC/USD price holder makes of odd answers from the payments service, over real HTTP with
// the sandbox as the service and a real SQLite file: an answer that is no price (it rounds to 0
// cents) is never held, so the catalog keeps answering and a dollar claim is priced at the last
// good price, from the catalog's dollars: never a 5xx for a player's claim.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Achievement } from '../../src/relay/core/catalog.js';
import type { CatalogResponse } from '../../src/wire/relay-api.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';

const dir = mkdtempSync(join(tmpdir(), 'rewardbus-price-answers-'));
const ACHIEVEMENTS: Achievement[] = [{ id: 'gem', title: 'Gem', usd: 0.05, repeat: { kind: 'cooldown', seconds: 0 } }];
const CATALOG = join(dir, 'catalog.json');
writeFileSync(CATALOG, JSON.stringify({ achievements: ACHIEVEMENTS }));

let relay: TestRelay | undefined;
afterEach(async () => {
  await relay?.stop();
  relay = undefined;
});

const control = (body: object) => fetch(`${relay!.url}/sandbox/_sandbox/btcusd`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const catalog = async () => {
  const r = await fetch(`${relay!.url}/v1/catalog`);
  return { status: r.status, body: (await r.json()) as CatalogResponse };
};
/** Once the relay has read the service's answer since it was set: it said the refresh failed, or its catalog changed. */
const answerRead = () =>
  expect.poll(async () => relay!.logs.some((l) => l.includes('"price_refresh_failed"')) || (await catalog()).body.achievements?.[0]?.sats !== 77, { timeout: 15_000 }).toBe(true);
const metric = async (name: string) => {
  const text = await (await fetch(`${relay!.url}/metrics`, { headers: { authorization: `Bearer ${relay!.adminToken}` } })).text();
  return new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1];
};

describe('the BTC/USD price holder, with answers that are no price', () => {
  it('a price that rounds to 0 cents ("0.004") is refused as no price: the last good one stands, the catalog answers, a claim pays the catalog’s dollars at it', async () => {
    relay = await startTestRelay({ RELAY_CATALOG: CATALOG, RELAY_PRICE_TTL_SECONDS: '1', RELAY_USER_DAILY_CAP_SATS: '0', RELAY_DAILY_BUDGET_SATS: '0' });
    const player = await relay.link('ada');
    await expect.poll(async () => (await catalog()).body.achievements[0]?.sats, { timeout: 15_000 }).toBe(77);

    expect((await control({ usd: 0.004 })).status).toBe(200);
    await answerRead();
    const shown = await catalog();
    expect(shown.status).toBe(200);
    expect(shown.body.achievements[0]).toMatchObject({ id: 'gem', sats: 77, usd: 0.05 });
    expect(await metric('rewardbus_btc_usd')).toBe('65000');

    const claim = await relay.claim(player.token, { achievementId: 'gem' });
    expect(claim.status).toBe(201);
    expect(claim.body).toMatchObject({ status: 'paid', sats: 77, usd: 0.05, btcUsd: 65_000 });
    expect(relay.sandbox!.payments().map((p) => Number(p.amount) / 1000)).toEqual([77]);
  });

  it('with no good price ever read, the catalog answers and a dollar claim is 503 price_unavailable (nothing paid), never a 500', async () => {
    // The service's first answer is already no price.
    relay = await startTestRelay(
      { RELAY_CATALOG: CATALOG, RELAY_PRICE_TTL_SECONDS: '1', RELAY_USER_DAILY_CAP_SATS: '0', RELAY_DAILY_BUDGET_SATS: '0' },
      { sandbox: { btcUsd: 0.004 } },
    );
    const player = await relay.link('bob');
    await answerRead();
    expect((await catalog()).status).toBe(200);
    const claim = await relay.claim(player.token, { achievementId: 'gem' });
    expect(claim.status).toBe(503);
    expect(claim.body.code).toBe('price_unavailable');
    expect(claim.headers.get('content-type')).toContain('application/problem+json');
    expect(claim.headers.get('retry-after')).toBeTruthy();
    expect(relay.sandbox!.payments()).toEqual([]);
  });
});
