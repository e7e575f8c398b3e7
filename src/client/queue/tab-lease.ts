import type { RewardStorage } from '../storage/index.js';

const LEASE_KEY = 'lease';
const LEASE_MS = 15_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Lease {
  owner: string;
  until: number;
}

/**
 * Runs `work` while holding a lease kept in the shared storage (renewed while held; a crashed
 * holder's lapses): for browsers and runtimes without Web Locks, loaded only there. A store that
 * fails (a full disk) keeps no lease: `work` runs without one, as sending what is only in memory
 * is its one way to the relay, and the idempotency keys make an overlap with another sender harmless.
 */
export async function withTabLease<T>(storage: RewardStorage, owner: string, work: () => Promise<T>): Promise<T> {
  try {
    await take(storage, owner);
  } catch {
    return work();
  }
  const renew = setInterval(() => void storage.setMany([[LEASE_KEY, { owner, until: Date.now() + LEASE_MS }]]).catch(() => undefined), LEASE_MS / 3);
  try {
    return await work();
  } finally {
    clearInterval(renew);
    // Not let go (the store failing): it lapses.
    await storage.delMany([LEASE_KEY]).catch(() => undefined);
  }
}

async function take(storage: RewardStorage, owner: string) {
  for (;;) {
    const lease = await storage.get<Lease>(LEASE_KEY);
    if (!lease || lease.owner === owner || lease.until < Date.now()) {
      await storage.setMany([[LEASE_KEY, { owner, until: Date.now() + LEASE_MS } satisfies Lease]]);
      // Two tabs may both have written: the later write wins, the other waits.
      await sleep(20);
      if ((await storage.get<Lease>(LEASE_KEY))?.owner === owner) return;
    }
    await sleep(100 + Math.random() * 150);
  }
}
