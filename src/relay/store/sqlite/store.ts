import { Worker } from 'node:worker_threads';
import type { EventLog } from '../../core/ports/event-log.js';
import { type BalanceFacts, type DayLimit, DayLimitRefusal, type Ledger, WithdrawalRefusal } from '../../core/ports/ledger.js';
import type { ReferralStore } from '../../core/ports/referral-store.js';
import type { RelayStore } from '../../core/ports/relay-store.js';
import { sourceWorker } from './source-worker.js';

/** A call to the store's thread, and its answer (id 0: the database is open). */
export type StoreCall = { id: number; target: 'ledger' | 'events' | 'referrals' | 'ping' | 'close'; method: string; args: unknown[] };
export type StoreReply = { id: number; value: unknown } | { id: number; error: unknown };

// From source the worker sits beside this module; once built it is dist/relay/sqlite-worker.js
// (every bundle in the relay's dist is one folder deep, hence the `../relay/`).
const fromSource = import.meta.url.endsWith('.ts');
const WORKER_URL = fromSource ? new URL('./worker.ts', import.meta.url) : new URL('../relay/sqlite-worker.js', import.meta.url);

/**
 * The store's thread. From source it runs worker.ts bundled once per process (source-worker.ts),
 * without the process's `--import tsx`, which a thread would otherwise load again for nothing.
 */
function startWorker(file: string): Worker {
  if (!fromSource) return new Worker(WORKER_URL, { workerData: { file } });
  return new Worker(sourceWorker(WORKER_URL), { workerData: { file }, execArgv: [] });
}

// Every method each side answers: a method added to Ledger or EventLog fails to compile until listed.
const LEDGER_METHODS: Record<Exclude<keyof Ledger, 'close'>, true> = {
  find: true,
  claim: true,
  markSent: true,
  settle: true,
  get: true,
  history: true,
  earnedSince: true,
  inState: true,
  abandoned: true,
  budgetUsed: true,
  budgetUsedUsd: true,
  linkAddress: true,
  linkedPlayers: true,
  report: true,
  recent: true,
  audits: true,
  prune: true,
  withdraw: true,
  balance: true,
  withdrawals: true,
  beat: true,
  raiseAllowance: true,
  mergeGuest: true,
  mergedInto: true,
  balancesOwed: true,
  postTournament: true,
  rememberPlayer: true,
  knownPlayers: true,
};
const EVENT_LOG_METHODS: Record<Exclude<keyof EventLog, 'subscribe' | 'latestId'>, true> = {
  append: true,
  since: true,
  receiveWebhook: true,
  webhookReceived: true,
  recentWebhooks: true,
  rememberRampSession: true,
};

const REFERRAL_METHODS: Record<keyof ReferralStore, true> = {
  code: true,
  ownerOf: true,
  firstLink: true,
  seen: true,
  seenSince: true,
  forget: true,
  refer: true,
  pending: true,
  qualify: true,
  rewarded: true,
  unfinished: true,
  recent: true,
};

/**
 * An error as the thread sends it (worker.ts `crossing`), made whole again: a refusal as its
 * class; any other error an Error with its name, message, code and the thread's stack. A bare
 * object is no error to Hono, whose error handler let it through to the adapter's 500: a busy or
 * full file was then a 500 internal, not the store outage (503) it is.
 */
function errorOf(e: unknown): unknown {
  if (!e || typeof e !== 'object') return e;
  if ('dayLimit' in e) return new DayLimitRefusal(e.dayLimit as DayLimit);
  if ('withdrawalRefusal' in e && 'facts' in e) return new WithdrawalRefusal(e.withdrawalRefusal as WithdrawalRefusal['reason'], e.facts as BalanceFacts);
  if ('storeError' in e) {
    const { name, message, stack, code } = e.storeError as { name: string; message: string; stack?: string; code?: string };
    return Object.assign(new Error(message), { name, ...(stack === undefined ? {} : { stack }), ...(code === undefined ? {} : { code }) });
  }
  return e;
}

export interface SqliteStore extends RelayStore {
  /** Settles once the database is open, or rejects with why it could not be (calls reject too). */
  opened: Promise<void>;
}

/**
 * The embedded backend: one SQLite file, owned by a thread of its own. The ledger and the event
 * log share its group commit; each call resolves once its commit is durable.
 */
export function openSqliteStore(file: string): SqliteStore {
  const worker = startWorker(file);
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
  let nextId = 1;
  let failed: unknown;

  // Awaited from the start (id 0), so the thread holds the process until it is open.
  const opened = new Promise<void>((resolve, reject) => pending.set(0, { resolve: () => resolve(), reject }));
  worker.on('message', (replies: StoreReply[]) => {
    for (const reply of replies) {
      const p = pending.get(reply.id);
      if (!p) continue;
      pending.delete(reply.id);
      if ('error' in reply) p.reject(errorOf(reply.error));
      else p.resolve(reply.value);
    }
    // The thread keeps the process alive only while an answer is awaited (a CLI command exits when done).
    if (pending.size === 0) worker.unref();
  });
  const fail = (error: unknown) => {
    failed ??= error;
    for (const p of pending.values()) p.reject(failed);
    pending.clear();
  };
  worker.on('error', fail);
  worker.on('exit', () => fail(new Error('the SQLite store is closed')));

  // Calls made in one turn of the event loop go over in one message: posting is what costs.
  let outbox: StoreCall[] = [];
  const sendOutbox = () => {
    worker.postMessage(outbox);
    outbox = [];
  };
  function call(target: StoreCall['target'], method: string, args: unknown[]): Promise<unknown> {
    if (failed) return Promise.reject(failed);
    const id = nextId++;
    return new Promise((resolve, reject) => {
      if (pending.size === 0) worker.ref();
      pending.set(id, { resolve, reject });
      if (outbox.push({ id, target, method, args }) === 1) setImmediate(sendOutbox);
    });
  }
  const remote = <T>(target: 'ledger' | 'events' | 'referrals', methods: object) =>
    Object.fromEntries(Object.keys(methods).map((m) => [m, (...args: unknown[]) => call(target, m, args)])) as unknown as T;

  // Nobody may be waiting on it yet: its rejection is for whoever asks (calls reject on their own).
  opened.catch(() => undefined);
  const close = async () => {
    if (failed) return;
    await call('close', '', []);
    await worker.terminate();
  };
  return {
    ping: () => call('ping', '', []).then(() => undefined),
    ledger: { ...remote<Omit<Ledger, 'close'>>('ledger', LEDGER_METHODS), close },
    events: remote<EventLog>('events', EVENT_LOG_METHODS),
    referrals: remote<ReferralStore>('referrals', REFERRAL_METHODS),
    close,
    opened,
  };
}
