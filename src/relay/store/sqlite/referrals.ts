import { utcDay } from '../../../wire/earning-rules.js';
import { inChunks, PRUNE_CHUNK } from '../../core/ports/ledger.js';
import type { ReferralState, ReferralStore } from '../../core/ports/referral-store.js';
import { referrerCapped } from '../../core/referral-decision.js';
import { FIRST_PAGE, REFEREE_EARNED, type ReferralRow, referralOf } from '../referral-row.js';
import type { SqliteDb } from './db.js';

/** The referral programs' tables on SQLite (migration 9): every write in the store's one thread, so a qualification's count is never raced. */
export function sqliteReferrals({ db, write }: SqliteDb): ReferralStore {
  const q = {
    code: db.prepare<[string], string>('SELECT code FROM referral_codes WHERE user_id = ?').pluck(),
    setCode: db.prepare<[string, string]>('INSERT INTO referral_codes (user_id, code) VALUES (?, ?) ON CONFLICT (user_id) DO NOTHING'),
    owner: db.prepare<[string], string>('SELECT user_id FROM referral_codes WHERE code = ?').pluck(),
    firstLink: db.prepare<[string], number>('SELECT at FROM first_links WHERE user_id = ?').pluck(),
    setFirstLink: db.prepare<[string, number]>('INSERT INTO first_links (user_id, at) VALUES (?, ?) ON CONFLICT (user_id) DO NOTHING'),
    seen: db.prepare<[string, string, number]>(
      'INSERT INTO player_addresses (user_id, address, at) VALUES (?, ?, ?) ON CONFLICT (user_id, address) DO UPDATE SET at = max(at, excluded.at)',
    ),
    seenSince: db.prepare<[string, string, number], number>('SELECT 1 FROM player_addresses WHERE user_id = ? AND address = ? AND at >= ?').pluck(),
    forget: db.prepare<[number]>(`DELETE FROM player_addresses WHERE (user_id, address) IN (SELECT user_id, address FROM player_addresses WHERE at < ? LIMIT ${PRUNE_CHUNK})`),
    refer: db.prepare<[string, string, string | null, ReferralState, string | null, number]>(
      'INSERT INTO referrals (program_id, referee_id, referrer_id, state, reason, linked_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
    ),
    pending: db.prepare<[string], ReferralRow<number>>("SELECT * FROM referrals WHERE referee_id = ? AND state = 'pending'"),
    one: db.prepare<[string, string], ReferralRow<number>>('SELECT * FROM referrals WHERE program_id = ? AND referee_id = ?'),
    qualifiedOn: db
      .prepare<[string, string, string], number>("SELECT count(*) FROM referrals WHERE program_id = ? AND referrer_id = ? AND state = 'qualified' AND qualified_day = ?")
      .pluck(),
    qualify: db.prepare<[number, string, number, string, string]>(
      "UPDATE referrals SET state = 'qualified', qualified_at = ?, qualified_day = ?, referrer_capped = ? WHERE program_id = ? AND referee_id = ? AND state = 'pending'",
    ),
    rewarded: db.prepare<[string, string]>('UPDATE referrals SET rewarded = 1 WHERE program_id = ? AND referee_id = ?'),
    unfinished: db.prepare<[number, number, string, string, number], ReferralRow<number>>(
      `SELECT * FROM referrals f
       WHERE ((f.state = 'qualified' AND f.rewarded = 0) OR (f.state = 'pending' AND f.linked_at >= ? AND ${REFEREE_EARNED}))
         AND (f.linked_at, f.program_id, f.referee_id) < (?, ?, ?)
       ORDER BY f.linked_at DESC, f.program_id DESC, f.referee_id DESC LIMIT ?`,
    ),
    recent: db.prepare<[number], ReferralRow<number>>('SELECT * FROM referrals ORDER BY linked_at DESC LIMIT ?'),
  };

  return {
    code: (userId, fresh) =>
      write(() => {
        q.setCode.run(userId, fresh);
        return q.code.get(userId)!;
      }),
    ownerOf: async (code) => q.owner.get(code),
    firstLink: (userId, at) =>
      write(() => {
        const first = q.setFirstLink.run(userId, at).changes === 1;
        return { first, at: first ? at : q.firstLink.get(userId)! };
      }),
    seen: (userId, address, at) => write(() => void q.seen.run(userId, address, at)),
    seenSince: async (userId, address, since) => q.seenSince.get(userId, address, since) !== undefined,
    // A chunk per write: the claims queued meanwhile go in between.
    forget: (seenBefore) => inChunks(() => write(() => q.forget.run(seenBefore).changes)),
    refer: (referrals) =>
      write(() => {
        for (const r of referrals) q.refer.run(r.programId, r.refereeId, r.referrerId ?? null, r.state, r.reason ?? null, r.linkedAt);
      }),
    pending: async (refereeId) => q.pending.all(refereeId).map(referralOf),
    qualify: (programId, refereeId, at, perReferrerDaily) =>
      write(() => {
        const r = q.one.get(programId, refereeId);
        if (!r || r.referrer_id === null) return undefined;
        if (r.state === 'qualified') return { referrerId: r.referrer_id, referrerCapped: Boolean(r.referrer_capped), fresh: false };
        if (r.state !== 'pending') return undefined;
        const day = utcDay(at);
        const capped = referrerCapped(q.qualifiedOn.get(programId, r.referrer_id, day) ?? 0, perReferrerDaily);
        q.qualify.run(at, day, capped ? 1 : 0, programId, refereeId);
        return { referrerId: r.referrer_id, referrerCapped: capped, fresh: true };
      }),
    rewarded: (programId, refereeId) => write(() => void q.rewarded.run(programId, refereeId)),
    unfinished: async (since, limit, after = FIRST_PAGE) => q.unfinished.all(since, after.linkedAt, after.programId, after.refereeId, limit).map(referralOf),
    recent: async (limit) => q.recent.all(limit).map(referralOf),
  };
}
