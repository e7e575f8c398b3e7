// The relay as `rewardbus start` runs it (the same settings, server and logger), with its store
// replaced by a few maps in memory: everything a claim does but keep it. What it makes beside
// the pass-through is what the relay's own HTTP path and checks cost (auth, validation, the
// idempotency key, the catalog, settlement, the log line, the answer); what the real relay makes
// beside it is what the ledger costs on top. A measure, never a store to run: it keeps an entry
// only until it is settled (kept, they would fill the heap and bill the relay for the collector).
// `node --import tsx bench/no-ledger-relay.ts`, with the relay's environment.

import { startServer } from '../src/node/start-server.js';
import { loadConfig } from '../src/relay/index.js';
import { createLogger } from '../src/relay/ops/logger.js';
import { memoryStore } from './memory-store.js';

// The configured store is opened too, and left idle: the relay is given this one instead.
const config = loadConfig();
const logger = createLogger(config.logLevel, undefined, config.payments ? [config.payments.apiKey] : []);
const running = await startServer(config, { relay: { store: memoryStore() }, logger });
// Past the start line the bench waits for: the level to measure at (warn: no line a claim).
if (process.env.BENCH_LOG_LEVEL) logger.level = process.env.BENCH_LOG_LEVEL;
// Stops on the bench's SIGTERM and exits, so that `node --cpu-prof` writes its profile.
process.on('SIGTERM', () => void running.close().finally(() => process.exit(0)));
