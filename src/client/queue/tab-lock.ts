import type { RewardStorage } from '../storage/index.js';

/**
 * Runs `work` while no other tab of the game does: Web Locks where the browser has them,
 * otherwise a lease kept in the shared storage (tab-lease.ts, loaded only then).
 * The relay's idempotency keys make a rare overlap harmless; this keeps it rare.
 */
export async function withTabLock<T>(name: string, storage: RewardStorage, owner: string, work: () => Promise<T>): Promise<T> {
  const locks = typeof navigator === 'undefined' ? undefined : (navigator as Navigator & { locks?: LockManager }).locks;
  if (locks?.request) return locks.request(name, () => work()) as Promise<T>;
  return (await import('./tab-lease.js')).withTabLease(storage, owner, work);
}
