import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { usesDollars } from '../relay/core/catalog-at.js';
import { countsDollars } from '../relay/core/claim-decision.js';
import { createCore } from '../relay/core/create-core.js';
import { createPrices } from '../relay/core/prices.js';
import { Refusal } from '../relay/core/refusal.js';
import { toRewardRecord } from '../relay/core/reward-record.js';
import { claimLimits, createCatalog, createLogger, createPaymentsClient, DEFAULT_CATALOG, loadCatalogFile } from '../relay/index.js';
import { commandConfig, openCommandStore } from './command-config.js';

const USAGE = 'Usage: rewardbus-relay tournament post FILE [--by NAME]   (FILE: { "tournamentId": "…", "period": "2026-W48", "ranking": ["<userId or gamertag>", …] })';

/** Who posted, for the results' record: --by, or the user running the command. */
function poster(by: string | undefined): string {
  let name = by?.trim();
  try {
    name ||= userInfo().username;
  } catch {
    // No user entry for this uid (a bare container): the generic name below.
  }
  return `cli:${(name || 'operator').slice(0, 64)}`;
}

/** The file's results, or why they are not: checked as the route checks its body (the relay's use case checks the rest). */
function resultsOf(path: string): { tournamentId: string; period: string; ranking: string[] } | string {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    return `${path}: ${(err as Error).message}`;
  }
  const r = json as { tournamentId?: unknown; period?: unknown; ranking?: unknown };
  if (!r || typeof r !== 'object' || typeof r.tournamentId !== 'string' || typeof r.period !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9._:-]{0,31}$/.test(r.period))
    return `${path}: needs "tournamentId" (a string) and "period" (1 to 32 letters, digits, dots, dashes, colons or underscores)`;
  if (!Array.isArray(r.ranking) || !r.ranking.length || !r.ranking.every((n) => typeof n === 'string' && n.length > 0 && n.length <= 128))
    return `${path}: "ranking" must be a list of userIds or gamertags, best first`;
  return { tournamentId: r.tournamentId, period: r.period, ranking: r.ranking as string[] };
}

/**
 * `tournament post FILE`: a period's results from a terminal, through the relay's own core
 * (createCore), as the game's server posts them: recorded once (the post's record says who), the
 * prizes paid by this process when the mode is instant (it waits for them), told to the players.
 */
export async function tournament(sub: string | undefined, rest: string[], by: string | undefined): Promise<number> {
  const [file] = rest;
  if (sub !== 'post' || !file) {
    console.error(USAGE);
    return 2;
  }
  if (rest.length > 1) {
    console.error(`tournament post takes one FILE (given: ${rest.join(' ')}).\n${USAGE}`);
    return 2;
  }
  const results = resultsOf(file);
  if (typeof results === 'string') {
    console.error(results);
    return 2;
  }
  const config = commandConfig();
  const catalog = config.catalogFile ? loadCatalogFile(config.catalogFile) : createCatalog(DEFAULT_CATALOG);
  const t = catalog.tournaments?.get(results.tournamentId);
  if (!t) {
    console.error(`No tournament ${results.tournamentId} in the catalog (RELAY_CATALOG).`);
    return 1;
  }
  const instant = (t.payout ?? config.payoutMode) !== 'balance';
  if (instant && !config.payments) {
    console.error('No PAYMENTS_API_KEY: the embedded sandbox lives in the relay process; post to POST /v1/server/tournaments/{id}/results there.');
    return 1;
  }
  const store = await openCommandStore(config);
  const payments = config.payments && createPaymentsClient({ ...config.payments, timeoutMs: config.paymentsTimeoutMs });
  // The relay's own limits: the prizes must fit today's budget, in sats or in dollars.
  const limits = claimLimits(config);
  // Prizes in dollars, or a dollar budget (issue 38): priced at the service's BTC/USD price, read once for this post.
  // No service (balance mode without a key): no price, and the post is refused as price_unavailable.
  const prices =
    payments && (usesDollars(catalog) || countsDollars(limits))
      ? createPrices(() => payments.btcUsd(), { ttlMs: config.priceTtlSeconds * 1000, maxAgeMs: config.priceMaxAgeSeconds * 1000, logger: createLogger('warn') })
      : undefined;
  const core = createCore({
    prices,
    store,
    payments,
    catalog,
    limits,
    logger: createLogger('warn'),
    holdAboveSats: config.holdAboveSats,
    payoutMode: config.payoutMode,
  });
  try {
    const r = await core.postResults!(results.tournamentId, { period: results.period, ranking: results.ranking }, poster(by));
    // The prizes this post recorded are paid by this process: it waits for them before it closes the store.
    await core.payouts.drain();
    const now = r.created ? await Promise.all(r.entries.map(async (e) => (await store.ledger.get(e.id)) ?? e)) : r.entries;
    console.log(r.created ? `posted ${results.tournamentId} ${results.period}` : `already posted ${results.tournamentId} ${results.period} (the same results)`);
    for (const e of now) console.log([e.terms?.place, e.userId, `${e.sats} sats`, toRewardRecord(e).status, e.id].join('\t'));
    return 0;
  } catch (err) {
    if (!(err instanceof Refusal)) throw err;
    console.error(`${err.code}: ${err.detail ?? ''}`);
    if (err.code === 'price_unavailable') console.error(`Nothing was recorded: post again once the service answers GET /v0/btcusd (in ${err.retryAfterSeconds ?? 60} s or so).`);
    return 1;
  } finally {
    payments?.close();
    await store.close().catch(() => undefined);
  }
}
