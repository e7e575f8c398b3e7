import { escapeLiteral, type Pool, type PoolClient } from 'pg';
import { utcDay } from '../../../wire/earning-rules.js';
import type { RewardTerms } from '../../../wire/relay-api.js';
import { addressCapped, claimedState, factsRead, refusal, tooEarly } from '../../core/claim-decision.js';
import type { ClaimLimits, ClaimResult, LedgerEntry, NewClaim } from '../../core/ports/ledger.js';
import { isStoreOutage } from '../../core/ports/outage.js';
import { entryUsdMicros } from '../../core/price.js';
import { decideStreak, isStreak, STREAK_LOOKBACK, type StreakLast, streakLastOf } from '../../core/streak.js';
import { keyDecisionOf, toLedgerEntry } from '../ledger-row.js';
import { type AppliedRow, type Change, changesJson, redecidedChange } from './apply.js';
import { type GroupResult, grouped, madeAlone } from './group.js';
import { BUSY_GROUPS, eventOf, lockConflict, RESERVING, type Row, TOLD } from './rows.js';
import { BEGIN, RETRYABLE } from './transaction.js';

/** A SQL string literal, for the statements sent without parameters (several in one round trip). */
const literal = (s: string) => escapeLiteral(s);

/**
 * A statement with its `$n` parameters written in as literals: the simple query protocol carries
 * several statements in one round trip, but no parameters. Strings are escaped by node-postgres's
 * own escapeLiteral; numbers must be finite; nothing else is accepted.
 */
function inline(sql: string, values: ReadonlyArray<string | number | boolean | null>): string {
  return sql.replace(/\$(\d+)/g, (_, n: string) => {
    const v = values[Number(n) - 1];
    if (v === null || v === undefined) return 'NULL';
    if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) throw new Error(`not a finite number: $${n}`);
      return String(v);
    }
    return literal(v);
  });
}

/** What a claim's rules read (rewardbus_claim_facts): it also spends the proof's nonce and locks the day's budget row. */
interface Facts {
  existing: Row | null;
  user_sats: string | number;
  address_sats: string | number;
  project_sats: string | number | null;
  last_at: string | number | null;
  nonce_fresh: boolean;
  /** When an operator last denied the player this achievement (the denial's audit time). */
  last_denied_at: string | number | null;
  /** The day's dollar value in micro-dollars (issue 38): the player's (with a cap) and the budget row's. */
  user_usd_micros: string | number;
  project_usd_micros: string | number | null;
}

/** A claim on its way to its facts: its time and day, and which of the rules' facts it needs. */
interface Prepared {
  claim: NewClaim;
  limits: ClaimLimits;
  sentAt: number;
  day: string;
  early: boolean;
  capped: boolean;
  budgeted: boolean;
  /** Groups that found this claim's lock held elsewhere (it goes alone after a few). */
  busy: number;
}

/** A claim decided: the key's entry is the answer, or the change to write (a new key, or a deferred one claimed again). */
type Decision = { kind: 'existing'; entry: LedgerEntry } | { kind: 'write'; change: Change };

const createdOf = (row: AppliedRow): ClaimResult => ({ kind: 'created', entry: toLedgerEntry(row.entry!), ...(row.event ? { event: eventOf(row.event) } : {}) });

/** The write primitive's call with a batch written in as literals (see inline): it follows the facts in the claim's transaction. */
const array = (xs: readonly string[]) => `${literal(`{${xs.join(',')}}`)}::text[]`;
const applyCall = (changes: readonly Change[]) => `SELECT * FROM rewardbus_apply(${literal(changesJson(changes))}::jsonb, ${array(RESERVING)}, ${array(TOLD)}, TRUE)`;

/** A call of one of the claim's functions, its arguments written in as literals (see inline). */
const call = (fn: string, arity: number) => `SELECT * FROM ${fn}(${Array.from({ length: arity }, (_, i) => `$${i + 1}`).join(', ')})`;
const FACTS_CALL = call('rewardbus_claim_facts', 11);
/** A streak's last reserving entries (core/streak.ts's streakLastOf), the reserving states spelled out as the facts spell them. */
const LAST_STREAK = `SELECT created_at, terms FROM rewards WHERE user_id = $1 AND achievement_id = $2
  AND state IN (${RESERVING.map(literal).join(', ')}) ORDER BY created_at DESC LIMIT ${STREAK_LOOKBACK}`;

/**
 * Claims on PostgreSQL: each under its player's advisory lock (and its address's, with an address
 * cap, and the day's budget row, with a budget), so the rules are checked and the sats reserved
 * against what every relay has committed; grouped (store/postgres/group.ts) when they come while
 * a group is under way. `owner` and `leaseMs`: this relay's, for the payments it goes on to send.
 */
export function pgClaims(pool: Pool, { owner, leaseMs }: { owner: string; leaseMs: number }) {
  const one = async (sql: string, params: unknown[]) => (await pool.query<Row>(sql, params)).rows.map(toLedgerEntry);

  /** A claim as its facts are asked for: its time, day and which of the rules' facts it needs. */
  function prepare(claim: NewClaim, limits: ClaimLimits, at: number | undefined): Prepared {
    // The claim's time is taken as it is sent (and moved up past the last claim it waited for).
    const sentAt = at ?? Date.now();
    // Witnessed play: too early decides nothing (deferred: no proof spent, nothing reserved).
    const early = tooEarly(claim, sentAt) !== undefined;
    const capped = addressCapped(claim, limits);
    const budgeted = !early && (limits.dailyBudgetSats > 0 || (limits.dailyBudgetUsd ?? 0) > 0);
    return { claim, limits, sentAt, day: utcDay(sentAt), early, capped, budgeted, busy: 0 };
  }

  /** rewardbus_claim_facts' arguments, by name (as an item of rewardbus_claim_facts_many) in its order. */
  const factsArgs = ({ claim, limits, sentAt, day, early, capped, budgeted }: Prepared) => ({
    user: claim.userId,
    key: claim.idempotencyKey,
    day,
    achievement: claim.achievementId,
    nonce: early ? null : (claim.proofNonce ?? null),
    id: claim.id,
    at: sentAt,
    budgeted,
    userCap: !early && (limits.userDailyCapSats > 0 || (limits.userDailyCapUsd ?? 0) > 0),
    address: !early && capped ? (claim.address ?? null) : null,
    lockAddress: capped ? (claim.address ?? null) : null,
  });

  /**
   * What the facts mean for the claim (core/claim-decision.ts, the same as SQLite's): the key's
   * entry as the answer, or the entry to write. `projectSats` and `projectUsdMicros`: the day's
   * budget as this claim sees it, with what the claims before it in its group reserved.
   */
  function decide(
    p: Prepared,
    facts: Facts,
    projectSats = Number(facts.project_sats ?? 0),
    projectUsdMicros = Number(facts.project_usd_micros ?? 0),
    streak?: StreakLast,
  ): Decision {
    const { limits, sentAt, day, early, budgeted } = p;
    const existing = facts.existing ?? undefined;
    const key = keyDecisionOf(existing, p.claim, false);
    if (key === 'existing') return { kind: 'existing', entry: toLedgerEntry(existing!) };
    // A claim that waited on the lock for one committed meanwhile is not earlier than it: its
    // time is at least that one's, so a cooldown never counts backwards. Only when its rule reads
    // the last claim (factsRead), as SQLite reads it: one earned any number of times keeps its own time.
    const lastAt = facts.last_at === null || !factsRead(p.claim, limits).lastReserving ? undefined : Number(facts.last_at);
    const now = Math.max(sentAt, lastAt ?? 0);
    // A streak's day and sats, from its last reserving day (read under the player's lock).
    const claim = decideStreak(p.claim, streak, now);
    const reason = early
      ? 'too_early'
      : refusal(
          claim,
          {
            lastReservingAt: lastAt,
            userSats: Number(facts.user_sats),
            projectSats,
            addressSats: Number(facts.address_sats),
            userUsdMicros: Number(facts.user_usd_micros ?? 0),
            projectUsdMicros,
            proofUsed: claim.proofNonce !== undefined && !facts.nonce_fresh,
            lastDeniedAt: facts.last_denied_at === null ? undefined : Number(facts.last_denied_at),
          },
          limits,
          now,
        );
    const state = early ? 'deferred' : claimedState(reason, claim);
    const lease = state === 'sending' ? now + leaseMs : null;
    const decided = {
      kind: claim.credit ? ('credit' as const) : ('payout' as const),
      state,
      reason: reason ?? null,
      sats: claim.sats,
      day,
      created: now,
      owner: lease === null ? null : owner,
      lease,
      budgeted: budgeted && RESERVING.includes(state),
      address: claim.address ?? null,
      gamertag: claim.gamertag ?? null,
      at: now,
      terms: claim.terms ?? null,
    };
    if (key === 'insert') {
      const { userId: user, idempotencyKey: k, requestHash: hash, achievementId: achievement } = claim;
      return { kind: 'write', change: { op: 'insert', id: claim.id, user, key: k, hash, achievement, occurred: claim.occurredAt ?? null, ...decided } };
    }
    // A deferred key decided whole, as a new claim: today's price, day, time and address.
    return { kind: 'write', change: redecidedChange(existing!.id, 'claim', decided) };
  }

  /**
   * A claim alone, in two round trips. The first begins the transaction and calls
   * rewardbus_claim_facts: it takes the player's lock (and the address's, with an address cap)
   * and reads every fact the rules need (spending the proof's nonce and locking the day's budget
   * row on the way), under those locks. The decision is made here, in TypeScript. The second
   * writes the entry with its reward event (rewardbus_claim_insert) and commits (or rolls back,
   * for a known key: what the facts spent is undone).
   */
  async function claimAlone(claim: NewClaim, limits: ClaimLimits, at: number | undefined): Promise<ClaimResult> {
    const p = prepare(claim, limits, at);
    const first = `${BEGIN}; ${inline(FACTS_CALL, Object.values(factsArgs(p)))}`;
    return onConnection(async (c) => {
      const results = (await c.query(first)) as unknown as Array<{ rows: Facts[] }>;
      // A streak's last day, read under the lock the facts took: one more round trip, for a streak's claim only.
      const streak = isStreak(claim) ? await lastStreak(c, claim) : undefined;
      const d = decide(p, results[results.length - 1]!.rows[0]!, undefined, undefined, streak);
      if (d.kind === 'existing') {
        await c.query('ROLLBACK');
        return d;
      }
      const written = (await c.query(`${applyCall([d.change])}; COMMIT`)) as unknown as Array<{ rows: AppliedRow[] }>;
      return createdOf(written[0]!.rows[0]!);
    });
  }

  /**
   * Claims grouped, in the same two round trips for the whole group: rewardbus_claim_facts_many
   * takes the locks the group's claims need (players' and addresses' only if free, then the days'
   * budget rows in day order) and reads each claim's facts; each is decided here, in turn, the
   * day's budget counting what the claims before it reserved that day;
   * rewardbus_claim_insert_many writes them and the group commits. A group holds one claim of a
   * player (and, under an address cap, of an address), so the facts of one cannot be changed by
   * another's write. A claim whose lock another transaction holds (another relay's) is answered
   * busy: it tries the next groups, then waits for its lock alone. A group that must write a
   * reclaim, or fails for one of its own, is rolled back and each of its claims made alone (a
   * later claim of that player waits for it).
   */
  async function claimGroup(ps: readonly Prepared[]): Promise<ReadonlyArray<GroupResult<ClaimResult>>> {
    const decided = await onConnection(async (c): Promise<Array<ClaimResult | 'busy'>> => {
      const items = JSON.stringify(ps.map((p, i) => ({ i, ...factsArgs(p) })));
      const results = (await c.query(`${BEGIN}; SELECT * FROM rewardbus_claim_facts_many(${literal(items)})`)) as unknown as Array<{
        rows: Array<Facts & { i: number; busy: boolean }>;
      }>;
      const facts = results[results.length - 1]!.rows;
      // Reserved by the group's claims before this one, per day (a group can span midnight).
      const reserved = new Map<string, { sats: number; micros: number }>();
      const decisions = ps.map((p, i): Decision | 'busy' => {
        const f = facts.find((x) => x.i === i)!;
        if (f.busy) return 'busy';
        const before = reserved.get(p.day) ?? { sats: 0, micros: 0 };
        const d = decide(p, f, Number(f.project_sats ?? 0) + before.sats, Number(f.project_usd_micros ?? 0) + before.micros);
        if (d.kind === 'write' && d.change.budgeted) reserved.set(p.day, { sats: before.sats + (d.change.sats ?? 0), micros: before.micros + entryUsdMicros(d.change.terms) });
        return d;
      });
      const writes = decisions.flatMap((d, i) => (d !== 'busy' && d.kind === 'write' ? [{ i, change: d.change }] : []));
      const apply = writes.length ? `${applyCall(writes.map((w) => w.change))}; ` : '';
      const written = (await c.query(`${apply}COMMIT`)) as unknown as Array<{ rows: AppliedRow[] }> | { rows: [] };
      // The primitive answers its batch's items in its own numbering: back to the group's.
      const applied = Array.isArray(written) ? written[0]!.rows : [];
      const byItem = new Map(applied.map((r) => [writes[r.i]!.i, r]));
      return decisions.map((d, i) => (d === 'busy' ? d : d.kind === 'existing' ? d : createdOf(byItem.get(i)!)));
    }).catch((err: unknown) => {
      if (isStoreOutage(err) && !lockConflict(err)) throw err;
      return undefined;
    });
    // Handed on: a busy claim to the next group (its lock is most likely free by then), and after
    // a few, alone, to wait for it; the group's others are answered now.
    const alone = (p: Prepared) => madeAlone(claimOnce(p.claim, p.limits, p.sentAt));
    if (!decided) return ps.map(alone);
    const later = (p: Prepared) => (p.busy < BUSY_GROUPS ? claimGrouped({ ...p, busy: p.busy + 1 }, true) : alone(p));
    return ps.map((p, i) => (decided[i] === 'busy' ? later(p) : (decided[i] as ClaimResult)));
  }

  const claimGrouped = grouped<Prepared, ClaimResult>(
    // A group of one too: alone, a claim would wait on a lock held elsewhere, and hold up the next group.
    claimGroup,
    { keys: (p) => (p.capped ? [`u:${p.claim.userId}`, `a:${p.claim.address}`] : [`u:${p.claim.userId}`]) },
  );

  /** A claim alone, run again when PostgreSQL chose it to break a deadlock; a key made meanwhile is the answer. */
  async function claimOnce(claim: NewClaim, limits: ClaimLimits, at: number | undefined): Promise<ClaimResult> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await claimAlone(claim, limits, at);
      } catch (err) {
        const code = (err as { code?: string }).code ?? '';
        if (RETRYABLE.has(code) && attempt < 5) continue;
        // The key's row was made meanwhile (the player's lock makes this rare): it is the answer.
        const existing = code === '23505' ? await one('SELECT * FROM rewards WHERE user_id = $1 AND idempotency_key = $2', [claim.userId, claim.idempotencyKey]) : [];
        if (existing[0]) return { kind: 'existing', entry: existing[0] };
        throw err;
      }
    }
  }

  async function lastStreak(c: PoolClient, claim: NewClaim): Promise<StreakLast | undefined> {
    const { rows } = await c.query<{ created_at: string; terms: RewardTerms | null }>(LAST_STREAK, [claim.userId, claim.achievementId]);
    return streakLastOf(rows.map((r) => ({ at: Number(r.created_at), terms: r.terms })));
  }

  /** Runs `work` on a connection of its own; a failure rolls back (or, from a server out of reach, drops the connection). */
  async function onConnection<T>(work: (c: PoolClient) => Promise<T>): Promise<T> {
    const c = await pool.connect();
    let broken = false;
    try {
      return await work(c);
    } catch (err) {
      broken = isStoreOutage(err);
      if (!broken) await c.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      c.release(broken);
    }
  }

  // A proof's nonce goes alone: a known key's claim must not keep what its facts spent. A streak's
  // claim goes alone too: it reads its last day in a statement of its own, after the facts.
  return (claim: NewClaim, limits: ClaimLimits, at?: number): Promise<ClaimResult> =>
    claim.proofNonce === undefined && !isStreak(claim) ? claimGrouped(prepare(claim, limits, at)) : claimOnce(claim, limits, at);
}
