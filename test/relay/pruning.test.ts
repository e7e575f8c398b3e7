// The relay forgets by itself what only past days' limits read: kept, a bot farm's addresses and
// spent proofs would grow the ledger for ever.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import { startTestRelay } from '../helpers/relay.js';

describe('the relay at start', () => {
  it("prunes past days' reservations, address links, expired proofs' nonces and addresses seen past the self-referral window; yesterday's, live proofs', the window's and the ledger stay", async () => {
    const first = await startTestRelay();
    const dataDir = first.dataDir;
    await first.link('alice');
    await first.close({ graceMs: 0 });
    const file = join(dataDir, 'ledger.sqlite');
    const db = new Database(file);
    const DAY = 86_400_000;
    const yesterday = new Date(Date.now() - DAY).toISOString().slice(0, 10);
    const link = db.prepare('INSERT INTO address_links (address, day, user_id) VALUES (?, ?, ?)');
    link.run('198.51.100.9', '2026-01-01', 'bot-1');
    link.run('198.51.100.9', yesterday, 'bot-1');
    const nonce = db.prepare('INSERT INTO proof_nonces (nonce, reward_id, at) VALUES (?, ?, ?)');
    nonce.run('spent-long-ago', 'r-1', Date.parse('2026-01-01'));
    // Its proof may have been signed for 30 days, and could still be claimed with: it stays.
    nonce.run('spent-29-days-ago', 'r-2', Date.now() - 29 * DAY);
    const reserve = db.prepare('INSERT INTO reserved (scope, day, sats) VALUES (?, ?, ?)');
    reserve.run('u:bot-1', '2026-01-01', 5);
    reserve.run('*', '2026-01-01', 5);
    reserve.run('u:bot-1', yesterday, 5);
    // Where players linked or claimed from: a referral from it within 30 days is a self-referral.
    const seen = db.prepare('INSERT INTO player_addresses (user_id, address, at) VALUES (?, ?, ?)');
    seen.run('bot-1', '198.51.100.9', Date.now() - 40 * DAY);
    seen.run('bot-2', '198.51.100.9', Date.now() - 29 * DAY);
    db.close();

    const relay = await startTestRelay({}, {}, dataDir);
    await vi.waitFor(() => expect(relay.logs.find((l) => l.includes('"event":"pruned"'))).toContain('"rows":4,'));
    await relay.close({ graceMs: 0 });
    const after = new Database(file, { readonly: true });
    expect(after.prepare('SELECT nonce FROM proof_nonces').pluck().all()).toEqual(['spent-29-days-ago']);
    expect(after.prepare('SELECT day FROM address_links WHERE address = ?').pluck().all('198.51.100.9')).toEqual([yesterday]);
    // The project's total of a past day stays (budgetUsed reads it); a player's goes.
    expect(after.prepare(`SELECT scope || ' ' || day FROM reserved ORDER BY 1`).pluck().all()).toEqual(['* 2026-01-01', `u:bot-1 ${yesterday}`]);
    expect(after.prepare('SELECT user_id FROM player_addresses').pluck().all()).toEqual(['bot-2']);
    expect(after.prepare('SELECT count(*) FROM rewards').pluck().get()).toBe(0);
    after.close();
    await relay.stop();
  });
});
