import { describe, expect, it } from 'vitest';
import { createRelayClient } from '../../../../src/client/delivery/relay-client.js';

/** Another server at the relay's address: every POST answered with its own 403 page. */
function otherServer() {
  const paths: string[] = [];
  const fetched = (async (input: RequestInfo | URL) => {
    paths.push(new URL(String(input)).pathname);
    return new Response('<html>403 Forbidden</html>', { status: 403, headers: { 'content-type': 'text/html' } });
  }) as typeof fetch;
  return { fetch: fetched, paths };
}

describe('claimAll, when another server refuses the batch', () => {
  it('tries its claims one by one no further than the first that finds no relay either, and gives that answer to the rest', async () => {
    const net = otherServer();
    const relay = createRelayClient({ relayUrl: 'http://relay.test', fetch: net.fetch });
    const claims = Array.from({ length: 10 }, (_, i) => ({ idempotencyKey: `k${i}`, achievementId: 'coin', occurredAt: new Date(0).toISOString() }));
    const answers = await relay.claimAll('token', claims);
    // Before, each of the ten was sent after the batch, each refused the same way.
    expect(net.paths).toEqual(['/v1/rewards/batch', '/v1/rewards']);
    expect(answers).toHaveLength(10);
    expect(answers.every((a) => 'unreachable' in a && a.foreign?.status === 403)).toBe(true);
  });
});
