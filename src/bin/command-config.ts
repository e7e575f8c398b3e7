import { loadConfig, type RelayConfig } from '../relay/index.js';

/**
 * The settings of a command that works on the ledger beside the relays (review, tournament post,
 * backup). It signs no player token, so RELAY_SECRET (required with RELAY_DATABASE_URL, else
 * generated in RELAY_DATA_DIR) is not asked for: a stand-in takes its place when it is absent or
 * empty (as .env.example leaves it). Nothing reads it: such a command opens its store with
 * `signsTokens: false`, never recording it among the relays' secrets.
 */
export function commandConfig(env: NodeJS.ProcessEnv = process.env): RelayConfig {
  return loadConfig({ ...env, RELAY_SECRET: env.RELAY_SECRET || 'commands-sign-no-player-tokens'.padEnd(32, '.') });
}
