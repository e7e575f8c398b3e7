// The relay forgets by itself what only past days' limits read: kept, a bot farm's addresses and
// spent proofs would grow the ledger for ever.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import { startTestRelay } from '../helpers/relay.js';

describe('the relay at start', () => {
  it("prunes past days' address links and expired proofs' nonces; today's and the ledger stay", async () => {
    const first = await startTestRelay();
    const dataDir = first.dataDir;
    await first.link('alice');
    await first.close({ graceMs: 0 });
    const file = join(dataDir, 'ledger.sqlite');
    const db = new Database(file);
    const day = new Date().toISOString().slice(0, 10);
    db.prepare('INSERT INTO address_links (address, day, user_id) VALUES (?, ?, ?)').run('198.51.100.9', '2026-01-01', 'bot-1');
    db.prepare('INSERT INTO address_links (address, day, user_id) VALUES (?, ?, ?)').run('198.51.100.9', day, 'bot-1');
    db.prepare('INSERT INTO proof_nonces (nonce, reward_id, at) VALUES (?, ?, ?)').run('spent-long-ago', 'r-1', Date.parse('2026-01-01'));
    db.prepare('INSERT INTO proof_nonces (nonce, reward_id, at) VALUES (?, ?, ?)').run('spent-today', 'r-2', Date.now());
    db.close();

    const relay = await startTestRelay({}, {}, dataDir);
    await vi.waitFor(() => expect(relay.logs.find((l) => l.includes('"event":"pruned"'))).toContain('"rows":2'));
    await relay.close({ graceMs: 0 });
    const after = new Database(file, { readonly: true });
    expect(after.prepare('SELECT nonce FROM proof_nonces').pluck().all()).toEqual(['spent-today']);
    expect(after.prepare('SELECT day FROM address_links WHERE address = ?').pluck().all('198.51.100.9')).toEqual([day]);
    expect(after.prepare('SELECT count(*) FROM rewards').pluck().get()).toBe(0);
    after.close();
    await relay.stop();
  });
});
