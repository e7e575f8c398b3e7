import { postgresUrl, text } from '../readers.js';
import { count, type Setting } from './setting.js';

/** The ledger: a SQLite file, or PostgreSQL shared by several relays. */
export const LEDGER_SETTINGS = {
  RELAY_DATA_DIR: {
    read: text,
    accepts: 'a directory',
    default: '.rewardbus',
    field: 'dataDir',
    group: 'ledger',
    docs: 'where the SQLite ledger (`ledger.sqlite`) and the generated token secret live',
    help: 'the ledger and the generated secret',
  },
  RELAY_DATABASE_URL: {
    read: postgresUrl,
    accepts: 'a postgres:// URL, such as postgres://user:password@db.internal/rewardbus',
    secret: true,
    defaultText: 'absent (SQLite)',
    field: 'databaseUrl',
    group: 'ledger',
    docs: '`postgres://user:pass@host/db`: one ledger shared by several relays. Needs `RELAY_SECRET`, the same on every relay. ' + 'The schema is created or migrated at start',
    help: 'postgres://…: a ledger shared by several relays (instead of SQLite)',
  },
  RELAY_DATABASE_LISTEN_URL: {
    read: postgresUrl,
    accepts: 'a postgres:// URL straight to PostgreSQL (or to a pooler in session mode), such as postgres://user:password@db.internal:5432/rewardbus',
    secret: true,
    defaultText: '`RELAY_DATABASE_URL`',
    field: 'databaseListenUrl',
    group: 'ledger',
    docs:
      'a connection straight to PostgreSQL (or through a pooler in session mode) for the work that needs a session of its own: ' +
      "LISTEN (other relays' payouts heard by this relay's streams) and the migrations. One connection per relay. " +
      "Set it when `RELAY_DATABASE_URL` goes through a pooler in transaction mode (PgBouncer's usual default), which drops notifications; " +
      'see [Behind a pooler](deploy.md#behind-a-pooler)',
    help: 'postgres://… straight to PostgreSQL, for LISTEN and migrations (default: RELAY_DATABASE_URL)',
  },
  RELAY_PAYMENT_LEASE_MS: {
    ...count('milliseconds, 1000 or more', 1000),
    defaultText: '2 × `PAYMENTS_TIMEOUT_MS` + 30 s',
    field: 'paymentLeaseMs',
    group: 'ledger',
    docs: "PostgreSQL only: how long a relay's claim on a payment in flight lasts before another relay may recover it. " + 'Longer than two `PAYMENTS_TIMEOUT_MS`',
    help: "with PostgreSQL: a relay's hold on a payment in flight (default: 2 x timeout + 30 s)",
  },
} as const satisfies Record<string, Setting>;
