import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { migrate } from './migrations.js';

type Op = { run: () => unknown; resolve: (v: never) => void; reject: (e: unknown) => void };

export interface SqliteDb {
  db: Database.Database;
  /** Runs `run` in the next group commit; resolves once that commit is durable. */
  write<T>(run: () => T): Promise<T>;
  close(): Promise<void>;
}

/** How long an open waits for another connection's write on the file (better-sqlite3's own default). */
const BUSY_MS = 5000;
const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Switches the file to WAL, waiting for another connection's write under way (a store or the
 * operator's command opening a new file at the same moment, migrating it). SQLite answers this
 * switch with SQLITE_BUSY at once, without its busy handler, when it meets another's write: it
 * holds a read lock by then, and waiting with it could deadlock. So the wait is here, lock-free.
 */
function switchToWal(db: Database.Database): void {
  const until = Date.now() + BUSY_MS;
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() >= until) throw err;
      Atomics.wait(pause, 0, 0, 10);
    }
  }
}

/** Opens (or creates) the relay's SQLite file and migrates it: WAL, durable at every commit, writes grouped. */
export function openSqliteDb(file: string): SqliteDb {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file);
  switchToWal(db);
  // Per connection, not stored in the file: a reopened WAL database would fall back to NORMAL.
  db.pragma('synchronous = FULL');
  db.pragma(`busy_timeout = ${BUSY_MS}`);
  // Checkpoint less often: each one rewrites and fsyncs the pages it copies.
  db.pragma('wal_autocheckpoint = 4000');
  migrate(db);

  // Group commit: writes that arrive in the same turn of the event loop share one transaction,
  // so one fsync covers them all; each still resolves only after its commit. A write that throws
  // undoes only itself: the batch is rolled back and run again with each write in its own
  // savepoint. Not before: a savepoint makes SQLite copy each page it changes, a tenth of a
  // claim's cost, for a throw that a write in good order never makes.
  let queue: Op[] = [];
  const thrown = Symbol('a write threw');
  const together = db.transaction((ops: Op[]) =>
    ops.map((op) => {
      try {
        return { ok: true as const, value: op.run() };
      } catch {
        throw thrown;
      }
    }),
  );
  const inSavepoint = db.transaction((run: () => unknown) => run());
  const apart = db.transaction((ops: Op[]) =>
    ops.map((op) => {
      try {
        return { ok: true as const, value: inSavepoint(op.run) };
      } catch (error) {
        return { ok: false as const, error };
      }
    }),
  );
  function commit() {
    const ops = queue;
    queue = [];
    try {
      let results: ReturnType<typeof apart>;
      // BEGIN IMMEDIATE: the file's write lock is taken first, waiting up to the busy timeout
      // for another process writing it (`rewardbus-relay review` on the file). A deferred BEGIN
      // read first (a claim looks its key up), and SQLite does not wait to turn a reader into
      // the writer: SQLITE_BUSY at once, and every write of the batch failed.
      try {
        results = together.immediate(ops);
      } catch (error) {
        // Only a write's own throw is tried again: a failed commit is every write's failure.
        if (error !== thrown) throw error;
        results = apart.immediate(ops);
      }
      results.forEach((r, i) => (r.ok ? ops[i]!.resolve(r.value as never) : ops[i]!.reject(r.error)));
    } catch (error) {
      for (const op of ops) op.reject(error);
    }
  }
  return {
    db,
    write: <T>(run: () => T) =>
      new Promise<T>((resolve, reject) => {
        if (queue.push({ run, resolve: resolve as (v: never) => void, reject }) === 1) setImmediate(commit);
      }),
    async close() {
      if (queue.length) commit();
      if (db.open) db.close();
    },
  };
}
