import { existsSync, renameSync, rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { ledgerFile } from '../relay/index.js';
import { commandConfig, missingLedger } from './command-config.js';

const USAGE = 'Usage: rewardbus-relay backup FILE [--force]   (a consistent copy of the SQLite ledger, while the relay runs)';

const PG_ADVICE = `RELAY_DATABASE_URL is set: the ledger is in PostgreSQL, and this command copies only the SQLite one.
Back PostgreSQL up with its own tools, while the relays run:
  pg_dump --format=custom --file=rewardbus-$(date +%F).dump "$RELAY_DATABASE_URL"
(restore with pg_restore), or continuous archiving for point-in-time recovery. See docs/deploy.md.`;

/**
 * `backup FILE`: a consistent copy of the SQLite ledger, made while the relay runs: one read
 * transaction on a connection of its own (`VACUUM INTO`), so the relay's writes go on and none
 * is half in the copy. The copy is written beside FILE and renamed into place once checked, so
 * FILE is never a partial copy. An existing FILE is kept unless `force`.
 */
export async function backup(file: string | undefined, force = false): Promise<number> {
  if (!file) {
    console.error(USAGE);
    return 2;
  }
  // Only RELAY_DATA_DIR and RELAY_DATABASE_URL matter here: the stand-in secret also keeps loadConfig
  // from generating one in a data dir that may not be the relay's.
  const config = commandConfig();
  if (config.databaseUrl) {
    console.error(PG_ADVICE);
    return 1;
  }
  const target = resolve(file);
  const source = ledgerFile(config);
  if (existsSync(target) && !force) {
    console.error(`${target} exists: not overwritten (--force to replace it).`);
    return 1;
  }
  const missing = missingLedger(config);
  if (missing) {
    console.error(missing);
    return 1;
  }
  if (!existsSync(dirname(target))) {
    console.error(`${dirname(target)} does not exist: make the directory first.`);
    return 1;
  }
  const partial = `${target}.partial-${process.pid}`;
  const db = new Database(source, { readonly: true, fileMustExist: true });
  try {
    // The relay commits with a busy timeout of its own; a reader in WAL mode waits on no one.
    db.pragma('busy_timeout = 5000');
    db.prepare('VACUUM INTO ?').run(partial);
  } catch (err) {
    rmSync(partial, { force: true });
    console.error(`Could not copy ${source}: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  } finally {
    db.close();
  }
  const copy = new Database(partial, { readonly: true, fileMustExist: true });
  let rewards: number;
  try {
    const check = copy.pragma('integrity_check', { simple: true });
    if (check !== 'ok') {
      console.error(`The copy failed its integrity check (${String(check)}); ${target} was not written.`);
      return 1;
    }
    rewards = copy.prepare('SELECT count(*) FROM rewards').pluck().get() as number;
  } finally {
    copy.close();
  }
  renameSync(partial, target);
  console.log(`Backed up ${source} to ${target}: ${rewards} rewards, integrity ok.`);
  console.log(`Keep beside it the relay's secret (${config.dataDir}/relay-secret, unless RELAY_SECRET is set) and its .env.`);
  return 0;
}
