import type { RewardBus } from '../../src/client/node.js';

/**
 * A fetch where another server (a proxy's error or maintenance page) answers the first `times`
 * requests to `path` with an HTML page and `status`, then lets them through. `passOn`: the request
 * reaches the relay first, and the page takes the place of its answer.
 */
export function otherServerFirst(path: string, status: number, times: number, { method = 'POST', passOn = false } = {}) {
  const seen = { foreign: 0, through: 0 };
  const fetched = (async (input: RequestInfo | URL, init?: RequestInit) => {
    if (new URL(String(input)).pathname === path && (init?.method ?? 'GET') === method) {
      if (seen.foreign < times) {
        seen.foreign++;
        if (passOn) await (await fetch(input, init)).text();
        return new Response(`<html><body>${status}: back soon</body></html>`, { status, headers: { 'content-type': 'text/html' } });
      }
      seen.through++;
    }
    return fetch(input, init);
  }) as typeof fetch;
  return { fetch: fetched, seen };
}

/** Every final outcome a bus says, and its offline notices, in order. */
export function heardOutcomes(b: RewardBus): string[] {
  const events: string[] = [];
  for (const e of ['reward:paid', 'reward:rejected', 'reward:failed', 'reward:review', 'relay:offline'] as const) b.on(e, () => events.push(e));
  return events;
}
