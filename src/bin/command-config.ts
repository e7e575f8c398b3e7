import { existsSync } from 'node:fs';
import { ledgerFile, loadConfig, openConfiguredStore, type RelayConfig, type RelayStore } from '../relay/index.js';
import { SettingError } from '../relay/settings-errors.js';

/**
 * The settings of a command that works on the ledger beside the relays (review, tournament post,
 * backup). It signs no player token, so RELAY_SECRET (required with RELAY_DATABASE_URL, else
 * generated in RELAY_DATA_DIR) is not asked for: a stand-in takes its place when it is absent or
 * empty (as .env.example leaves it). Nothing reads it: such a command opens its store with
 * openCommandStore, never recording it among the relays' secrets.
 */
export function commandConfig(env: NodeJS.ProcessEnv = process.env): RelayConfig {
  return loadConfig({ ...env, RELAY_SECRET: env.RELAY_SECRET || 'commands-sign-no-player-tokens'.padEnd(32, '.') });
}

/** The relay's SQLite ledger, where one must already be; the "No ledger" message for where there is none. */
export function missingLedger(config: RelayConfig): string | undefined {
  const file = ledgerFile(config);
  return config.databaseUrl || existsSync(file) ? undefined : `No ledger at ${file}: is RELAY_DATA_DIR (${config.dataDir}) the relay's?`;
}

/**
 * The relays' store, opened by a command: never a new SQLite ledger (run from the wrong directory,
 * it would answer from an empty one as if it were the relay's), and outside the relays' agreement
 * on RELAY_SECRET.
 */
export async function openCommandStore(config: RelayConfig): Promise<RelayStore> {
  const missing = missingLedger(config);
  if (missing) throw new SettingError('RELAY_DATA_DIR', missing);
  return openConfiguredStore(config, undefined, { signsTokens: false });
}
