// The operator sees the project wallet: on the page's API, in /metrics, and a warning when it runs low.
import { afterEach, describe, expect, it } from 'vitest';
import { TEST_GAMERTAGS } from '../../src/sandbox/index.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';

let relay: TestRelay | undefined;
afterEach(async () => {
  await relay?.stop();
  relay = undefined;
});

const get = (path: string) => fetch(`${relay!.url}${path}`, { headers: { authorization: `Bearer ${relay!.adminToken}` } });
const health = async () => (await (await get('/admin/api/health')).json()) as { walletBalanceSats: number | null; walletLow: boolean; walletLowSats: number };

describe('the project wallet', () => {
  it('shows its balance on the operator API and in /metrics, read from the service', async () => {
    relay = await startTestRelay({ RELAY_DAILY_BUDGET_SATS: '5000' }, { sandbox: { balanceSats: 250_000 } });
    expect(await health()).toMatchObject({ walletBalanceSats: 250_000, walletLow: false, walletLowSats: 5000 });
    expect(await (await get('/metrics')).text()).toMatch(/^rewardbus_wallet_balance_sats 250000$/m);
  });

  it('warns in the log and on the page when the balance is below the mark (by default a day of budget)', async () => {
    relay = await startTestRelay({ RELAY_DAILY_BUDGET_SATS: '5000' }, { sandbox: { balanceSats: 4000 } });
    expect(await health()).toMatchObject({ walletBalanceSats: 4000, walletLow: true });
    await expect.poll(() => relay!.logs.join('')).toContain('"event":"wallet_low"');
  });

  it('says so at once when a payout is refused for the balance, without waiting for the next reading', async () => {
    relay = await startTestRelay({}, { sandbox: { balanceSats: 900_000 } });
    expect((await health()).walletLow).toBe(false);
    const player = await relay.link(TEST_GAMERTAGS.refused);
    expect((await relay.claim(player.token, { achievementId: 'first-coin' })).body).toMatchObject({ status: 'failed', reason: 'insufficient_balance' });
    expect(await health()).toMatchObject({ walletLow: true, walletBalanceSats: 900_000 });
  });
});
