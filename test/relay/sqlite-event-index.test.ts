import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/relay/index.js';

describe("the SQLite event log's schema", () => {
  it("reads a resuming player's events by player, not by scanning every event since id 0", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rewardbus-index-'));
    try {
      const file = join(dir, 'relay.db');
      const store = openSqliteStore(file);
      await store.opened;
      await store.events.append('someone', 'ramp', {});
      await store.close();
      const db = new Database(file, { readonly: true });
      const plan = db.prepare('EXPLAIN QUERY PLAN SELECT * FROM events WHERE id > ? AND user_id = ? ORDER BY id LIMIT ?').all(0, 'someone', 500) as Array<{ detail: string }>;
      db.close();
      expect(plan.map((p) => p.detail).join('; ')).toMatch(/USING (COVERING )?INDEX \w+ \(user_id=\? AND (id|rowid)>\?\)/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
