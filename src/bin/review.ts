import { userInfo } from 'node:os';
import { createCore } from '../relay/core/create-core.js';
import { claimLimits, createCatalog, createLogger, createPaymentsClient, DEFAULT_CATALOG, type LedgerEntry, loadCatalogFile } from '../relay/index.js';
import { commandConfig, openCommandStore } from './command-config.js';

const USAGE = 'Usage: rewardbus-relay review list | reconcile | mark-paid <id> [transactionId] | mark-failed <id> | held | approve <id> | deny <id>  [--by NAME]';
const SUBCOMMANDS = ['list', 'reconcile', 'mark-paid', 'mark-failed', 'held', 'approve', 'deny'];
/** How many arguments each subcommand reads, and how to say it: one more was ignored, and `approve a b` left b undecided unsaid. */
const ARGUMENTS: Record<string, readonly [number, string]> = {
  list: [0, 'no arguments'],
  held: [0, 'no arguments'],
  reconcile: [0, 'no arguments'],
  'mark-paid': [2, 'one id and its transactionId'],
  'mark-failed': [1, 'one id'],
  approve: [1, 'one id'],
  deny: [1, 'one id'],
};

const show = (e: LedgerEntry) =>
  console.log([e.id, new Date(e.createdAt).toISOString(), e.userId, e.gamertag ?? '-', e.achievementId, `${e.sats} sats`, e.state, e.reason ?? '', e.paymentId ?? ''].join('\t'));

/** The operator's name for the audit trail: --by, or the user running the command. */
function operator(by: string | undefined): string {
  let name = by?.trim();
  try {
    name ||= userInfo().username;
  } catch {
    // No user entry for this uid (a bare container): the generic name below.
  }
  return (name || 'operator').slice(0, 64);
}

/**
 * `review …`: the operator's decisions from a terminal, through the same settlement core as the
 * operator's page. Each is audited with the operator's name and written with the player's event,
 * so a running relay's players hear of it (at once on a shared PostgreSQL ledger, on their next
 * resume with SQLite).
 */
export async function review(sub: string | undefined, rest: string[], by: string | undefined): Promise<number> {
  const [id, paymentId] = rest;
  const needsId = sub === 'mark-paid' || sub === 'mark-failed' || sub === 'approve' || sub === 'deny';
  if (!SUBCOMMANDS.includes(sub ?? '') || (needsId && !id)) {
    console.error(USAGE);
    return 2;
  }
  const [most, takes] = ARGUMENTS[sub!]!;
  if (rest.length > most) {
    console.error(`review ${sub} takes ${takes} (given: ${rest.join(' ')})${most ? ': one decision per command' : ''}.\n${USAGE}`);
    return 2;
  }
  const config = commandConfig();
  if (sub === 'reconcile' && !config.payments) {
    console.error('No PAYMENTS_API_KEY: the embedded sandbox lives in the relay process, which reconciles at start.');
    return 1;
  }
  // The relay's own limits: an approval on a later day is decided again against today's budget and cap, in sats or dollars.
  const limits = claimLimits(config);
  const store = await openCommandStore(config);
  const { ledger } = store;
  const payments = config.payments && createPaymentsClient({ ...config.payments, timeoutMs: config.paymentsTimeoutMs });
  // The relay's own core. Nobody streams from this process: the player's event is in the store for the relays to deliver.
  const core = createCore({
    store,
    payments,
    catalog: config.catalogFile ? loadCatalogFile(config.catalogFile) : createCatalog(DEFAULT_CATALOG),
    limits,
    logger: createLogger('warn'),
  });
  try {
    if (sub === 'list') {
      const open = await ledger.inState('needs_review');
      if (!open.length) console.log('Nothing to review.');
      open.forEach(show);
      return 0;
    }
    if (sub === 'held') {
      const held = await ledger.inState('held');
      if (!held.length) console.log('Nothing is held.');
      held.forEach(show);
      return 0;
    }
    if (sub === 'reconcile') {
      const r = await core.payouts.reconcile();
      console.log(`settled ${r.settled}, still open ${r.open}`);
      return 0;
    }
    // A held payment is paid through the service; a held credit (balance mode) only changes the ledger.
    const held = sub === 'approve' && !payments ? await ledger.get(id!) : undefined;
    if (held?.state === 'held' && held.kind !== 'credit') {
      console.error("No PAYMENTS_API_KEY: the embedded sandbox lives in the relay process; approve on the operator's page (/admin).");
      return 1;
    }
    const r = await core.decide(id!, sub as 'mark-paid' | 'mark-failed' | 'approve' | 'deny', operator(by), paymentId);
    if (r.kind === 'refused') {
      console.error(
        `${id} stays held: today's ${r.reason === 'daily_budget' ? 'budget' : r.reason === 'user_daily_cap' ? 'player cap' : 'address cap'} has no room for it (${r.reason}).`,
      );
      return 1;
    }
    if (r.kind !== 'settled') {
      console.error(sub === 'approve' || sub === 'deny' ? `${id} is not held for approval.` : `${id} is not awaiting review.`);
      return 1;
    }
    show(r.entry);
    return 0;
  } finally {
    payments?.close();
    await store.close().catch(() => undefined);
  }
}
