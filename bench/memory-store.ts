// A store of a few maps in memory, for the bench: everything a claim does but keep it. A measure,
// never a store to run: it keeps an entry only until it is settled (kept, they would fill the heap
// and bill the relay for the collector).

import { LIFECYCLE } from '../src/relay/core/lifecycle.js';
import type { EventLog, PlayerEvent } from '../src/relay/core/ports/event-log.js';
import type { Ledger, LedgerEntry, Settled } from '../src/relay/core/ports/ledger.js';
import type { RelayStore } from '../src/relay/core/ports/relay-store.js';
import { toRewardRecord } from '../src/relay/core/reward-record.js';

export function memoryStore(): RelayStore {
  const byId = new Map<string, LedgerEntry>();
  let eventId = 0;
  const event = (userId: string, type: string, data: unknown): PlayerEvent => ({ id: ++eventId, userId, type, data, createdAt: Date.now() });
  const none = async () => [];
  const ledger: Ledger = {
    find: async () => undefined,
    claim: async (c, _limits, now = Date.now()) => {
      const entry: LedgerEntry = {
        id: c.id,
        userId: c.userId,
        idempotencyKey: c.idempotencyKey,
        requestHash: c.requestHash,
        achievementId: c.achievementId,
        sats: c.sats,
        state: 'sending',
        phase: 'claimed',
        createdAt: now,
      };
      byId.set(entry.id, entry);
      return { kind: 'created', entry };
    },
    markSent: async (id) => {
      const entry = byId.get(id);
      if (entry?.phase !== 'claimed') return false;
      entry.phase = 'sent';
      return true;
    },
    settle: async (id, transition, to, options = {}): Promise<Settled | undefined> => {
      const entry = byId.get(id);
      if (!entry || !(LIFECYCLE[transition].from as readonly string[]).includes(entry.state)) return undefined;
      byId.delete(id);
      const was = entry.state;
      Object.assign(entry, to, { settledAt: options.now ?? Date.now() });
      delete entry.phase;
      return { entry, from: was, event: event(entry.userId, 'reward', toRewardRecord(entry)) };
    },
    get: async (id) => byId.get(id),
    history: none,
    earnedSince: none,
    inState: none,
    abandoned: none,
    budgetUsed: async () => 0,
    linkAddress: async () => true,
    linkedPlayers: async () => [],
    report: none,
    recent: none,
    audits: none,
    close: async () => undefined,
  };
  const events: EventLog = {
    append: async (userId, type, data) => event(userId, type, data),
    since: none,
    receiveWebhook: async () => ({ fresh: true }),
    webhookReceived: async () => false,
    recentWebhooks: none,
    rememberRampSession: async () => undefined,
  };
  return { ledger, events, ping: async () => undefined, close: async () => undefined };
}
