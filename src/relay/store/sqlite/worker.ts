// The SQLite store's own thread: it owns the database, so each commit's fsync waits here while the
// relay's event loop goes on answering requests. Calls arrive in batches; those that arrive while
// a commit is waiting are committed together in the next one (sqlite-db.ts), and their answers
// go back together too.
import { parentPort, workerData } from 'node:worker_threads';
import { DayLimitRefusal, WithdrawalRefusal } from '../../core/ports/ledger.js';
import { openSqliteDb } from './db.js';
import { sqliteEventLog } from './event-log.js';
import { sqliteLedger } from './ledger.js';
import { sqliteReferrals } from './referrals.js';
import type { StoreCall, StoreReply } from './store.js';

const port = parentPort!;
type Method = (...args: unknown[]) => Promise<unknown>;

function open() {
  const db = openSqliteDb((workerData as { file: string }).file);
  return { db, targets: { ledger: sqliteLedger(db), events: sqliteEventLog(db), referrals: sqliteReferrals(db) } };
}

/**
 * An error as it can cross to the relay's thread (store.ts makes it whole again). A thread's
 * structured clone keeps no error's class: a refusal crosses as its reason, and better-sqlite3's
 * SqliteError (no error to the clone) came over as a bare `{ code }`, without its message.
 */
function crossing(error: unknown): unknown {
  if (error instanceof DayLimitRefusal) return { dayLimit: error.reason };
  if (error instanceof WithdrawalRefusal) return { withdrawalRefusal: error.reason, facts: error.facts };
  if (!(error instanceof Error)) return error;
  const { name, message, stack } = error;
  const code = (error as { code?: unknown }).code;
  return { storeError: { name, message, stack, ...(typeof code === 'string' ? { code } : {}) } };
}

let replies: StoreReply[] = [];
function reply(r: StoreReply) {
  if (replies.push(r) === 1) queueMicrotask(sendReplies);
}
function sendReplies() {
  port.postMessage(replies);
  replies = [];
}

let opened: ReturnType<typeof open> | undefined;
try {
  opened = open();
  reply({ id: 0, value: 'open' });
} catch (error) {
  // Why the file cannot be opened (not a database, no permission), whole: as the thread's own
  // uncaught error it reached the relay as a bare code, and the operator was told a wrong cause.
  // With nothing listening on the port, the thread then ends.
  reply({ id: 0, error: crossing(error) });
}
if (opened) serve(opened.db, opened.targets);

function serve(db: ReturnType<typeof open>['db'], targets: ReturnType<typeof open>['targets']) {
  port.on('message', (calls: StoreCall[]) => {
    for (const call of calls) {
      if (call.target === 'close') {
        void db.close().then(() => reply({ id: call.id, value: undefined }));
        continue;
      }
      if (call.target === 'ping') {
        // Readiness: the thread answers and the file reads.
        try {
          reply({ id: call.id, value: db.db.prepare('SELECT 1').pluck().get() });
        } catch (error) {
          reply({ id: call.id, error: crossing(error) });
        }
        continue;
      }
      const method = (targets[call.target] as unknown as Record<string, Method>)[call.method]!;
      method(...call.args).then(
        (value) => reply({ id: call.id, value }),
        (error: unknown) => reply({ id: call.id, error: crossing(error) }),
      );
    }
  });
}
