// The payments service as a core's PaymentsClient, in memory, for tests that build a core on a
// store themselves (no relay, no sandbox): it pays every payment while up, and is out of reach
// (connection refused) while down.
import type { PaymentsClient } from '../../src/relay/index.js';

/** `up`: whether it answers (changed through `state.up`); `state.paid` and `state.descriptions`: each payment's gamertag and description, in order. */
export function memoryService(up = true) {
  const state = { up, paid: [] as string[], descriptions: [] as string[] };
  const ok = <T>(data: T) => Promise.resolve({ kind: 'ok' as const, data });
  const down = () => Promise.resolve({ kind: 'unavailable' as const, reason: 'connection refused' });
  const client = {
    gamertagByUserId: (userId: string) => (state.up ? ok({ gamertag: `tag-${userId}` }) : down()),
    sendPayment: (b: { gamertag: string; amount: string; description?: string }) => {
      if (!state.up) return down();
      state.paid.push(b.gamertag);
      state.descriptions.push(b.description ?? '');
      const id = `tx-${state.paid.length}`;
      return ok({ id, status: 'settled', transactionId: id, receiverId: b.gamertag.slice(4), amount: b.amount, comment: b.description ?? '', settledAt: new Date().toISOString() });
    },
    userIdByGamertag: down,
    transaction: down,
    withdrawalRequest: down,
    rampWidget: down,
    wallet: () => ok(1_000_000),
    btcUsd: () => ok(65_000),
    close: () => undefined,
  } as unknown as PaymentsClient;
  return { state, client };
}
