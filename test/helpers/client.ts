import { afterEach } from 'vitest';
import { createRewardBus, type RewardBus, type RewardBusEvents, type RewardStorage } from '../../src/client/node.js';
import { DEFAULT_CATALOG } from '../../src/relay/index.js';
import type { PlayerSession, RewardClaimBatch } from '../../src/wire/relay-api.js';
import { startTestRelay, type TestRelay } from './relay.js';

export /** A fetch that counts claims per idempotency key (alone or in a batch) and can be told to fail. */
function controlledFetch() {
  const claims = new Map<string, number>();
  const c = {
    claims,
    offline: false,
    /** Answers the next n claims with this status instead of passing them on, as the relay refuses (a problem document). */
    failNext: 0,
    failStatus: 503,
    /** Passes the next n claims on but loses the answer, as a timeout would. */
    loseNext: 0,
    maxInFlight: 0,
    inFlight: 0,
    /** Requests that claimed: the claims each carried (1 for `POST /v1/rewards`). */
    requests: [] as number[],
    /** Requests that tried to claim, offline or not. */
    tries: 0,
    fetch: (async (input: RequestInfo | URL, init?: RequestInit) => {
      const url = String(input);
      const batch = url.endsWith('/v1/rewards/batch');
      const claiming = (batch || url.endsWith('/v1/rewards')) && init?.method === 'POST';
      if (claiming) c.tries++;
      if (c.offline) throw new TypeError('fetch failed: offline');
      if (!claiming) return fetch(input, init);
      const keys = batch ? (JSON.parse(String(init.body)) as RewardClaimBatch).claims.map((x) => x.idempotencyKey) : [new Headers(init.headers).get('idempotency-key')!];
      for (const key of keys) claims.set(key, (claims.get(key) ?? 0) + 1);
      c.requests.push(keys.length);
      if (c.failNext > 0) {
        c.failNext--;
        return new Response(JSON.stringify({ code: 'x', status: c.failStatus }), {
          status: c.failStatus,
          headers: { 'content-type': 'application/problem+json', 'retry-after': '0' },
        });
      }
      c.inFlight++;
      c.maxInFlight = Math.max(c.maxInFlight, c.inFlight);
      try {
        const res = await fetch(input, init);
        if (c.loseNext > 0) {
          c.loseNext--;
          await res.text();
          throw new TypeError('fetch failed: timeout');
        }
        return res;
      } finally {
        c.inFlight--;
      }
    }) as typeof fetch,
  };
  return c;
}

/** Pays every time: for tests of the queue itself, where the repeat rules would only skip. */
export const everyCoin = { relay: { catalog: [...DEFAULT_CATALOG, { id: 'coin', title: 'Coin', sats: 1, repeat: { kind: 'cooldown' as const, seconds: 0 } }] } };

/** The demo catalog without its play time: for tests about anything but witnessed play. */
export const noPlayTime = { relay: { catalog: DEFAULT_CATALOG.map(({ minPlaySeconds: _wait, ...a }) => a) } };

export const next = <E extends keyof RewardBusEvents>(b: RewardBus, event: E) =>
  new Promise<Parameters<RewardBusEvents[E]>[0]>((resolve) => b.once(event, ((e: Parameters<RewardBusEvents[E]>[0]) => resolve(e)) as never));

/** Buses for a test's relay, each on fresh storage, with fast retries; destroyAll() after each test. */
export function busMaker(relayUrl: () => string, storage: () => RewardStorage) {
  const made: RewardBus[] = [];
  return {
    bus(options: Partial<Parameters<typeof createRewardBus>[0]> = {}): RewardBus {
      const b = createRewardBus({ relayUrl: relayUrl(), storage: storage(), retry: { baseMs: 20, maxMs: 100 }, ...options });
      made.push(b);
      return b;
    },
    destroyAll: () => made.splice(0).forEach((b) => b.destroy()),
  };
}

/**
 * Each test's relay (`start` it in the test) and buses on it, each on its own `storage()`; both
 * stopped after each test.
 */
export function busesOnTestRelay(storage: () => RewardStorage) {
  let relay: TestRelay | undefined;
  const { bus, destroyAll } = busMaker(() => relay!.url, storage);
  afterEach(async () => {
    destroyAll();
    await relay?.stop();
    relay = undefined;
  });
  return { bus, start: async (...args: Parameters<typeof startTestRelay>) => (relay = await startTestRelay(...args)) };
}

/** An EventSource the test drives: it hands the bus the relay's stream messages when told to. */
export { fakeEventSources as fakeStream } from './fake-event-source.js';

/**
 * A small EventSource over fetch, as a browser's behaves where these tests look: `open` on a 200
 * event stream, a MessageEvent (with `lastEventId`) per message, `error` when the connection
 * fails or ends, and then, unless closed, a reconnection to the same URL (as browsers do after a
 * network error). `urls` lists every URL it connected to; `drop()` cuts the open connections.
 */
export function fetchEventSource() {
  const urls: string[] = [];
  const live = new Set<{ drop(): void }>();
  class FetchEventSource extends EventTarget {
    readyState = 0;
    #controller = new AbortController();
    constructor(readonly url: string) {
      super();
      void this.#run();
    }
    close() {
      this.readyState = 2;
      this.#controller.abort();
    }
    async #run() {
      const self = { drop: () => this.#controller.abort() };
      live.add(self);
      urls.push(this.url);
      try {
        const r = await fetch(this.url, { signal: this.#controller.signal });
        if (r.status !== 200) {
          await r.body?.cancel();
          // A browser fails for good on an answer that is not an event stream.
          this.readyState = 2;
          this.dispatchEvent(new Event('error'));
          return;
        }
        this.readyState = 1;
        this.dispatchEvent(new Event('open'));
        const reader = r.body!.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
          buffer += chunk.value;
          for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
            const lines = buffer.slice(0, end).split('\n');
            buffer = buffer.slice(end + 2);
            const field = (name: string) =>
              lines
                .find((l) => l.startsWith(`${name}:`))
                ?.slice(name.length + 1)
                .trim();
            const data = field('data');
            if (data !== undefined) this.dispatchEvent(new MessageEvent(field('event') ?? 'message', { data, lastEventId: field('id') ?? '' }));
          }
        }
      } catch {
        // cut off
      } finally {
        live.delete(self);
      }
      if (this.readyState === 2) return;
      this.readyState = 0;
      this.dispatchEvent(new Event('error'));
      if (this.readyState !== 2) setTimeout(() => this.readyState !== 2 && void this.#run(), 100);
    }
  }
  return {
    Source: FetchEventSource as unknown as new (url: string) => EventSource,
    urls,
    drop: () => live.forEach((c) => c.drop()),
  };
}

/**
 * A store where `gamertag` linked, by a bus since gone, whose token has lapsed: the next claim
 * renews it first, by linking the gamertag again.
 */
export async function lapsedPlayer(bus: (options: { storage: RewardStorage }) => RewardBus, storage: RewardStorage, gamertag = 'alice'): Promise<RewardStorage> {
  const first = bus({ storage });
  const player = await first.link(gamertag);
  first.destroy();
  await storage.setMany([[`session:${player.userId}`, { ...player, expiresAt: new Date(0).toISOString() } satisfies PlayerSession]]);
  return storage;
}

/** A fetch that writes down `<path> <status>` for each answer to the heartbeat or a link: what a lapsed token's renewal asked. */
export function playAndLinkAnswers() {
  const answers: string[] = [];
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const r = await globalThis.fetch(input, init);
    const path = new URL(String(input)).pathname;
    if (path === '/v1/play' || path === '/v1/players') answers.push(`${path} ${r.status}`);
    return r;
  }) as typeof globalThis.fetch;
  return { fetch, answers };
}
