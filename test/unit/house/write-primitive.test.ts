// The SQLite ledger's one write primitive (apply, `commit` in src/relay/store/sqlite/ledger.ts)
// is the only code that writes a reward: the files beside it (balance, guests, streaks, address
// links, tournaments) read, and write rewards only through the `commit` the ledger lends them.
// And the ledger's file stays small enough to read: the primitive and the reward queries.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const SQLITE = 'src/relay/store/sqlite';
const WRITES_REWARDS = /\b(INSERT\s+INTO|UPDATE|DELETE\s+FROM|REPLACE\s+INTO)\s+rewards\b/i;

describe("the SQLite ledger's one write primitive", () => {
  const files = readdirSync(SQLITE).filter((f) => f.endsWith('.ts'));

  it('is the only code of the SQLite store that writes the rewards table (migrations aside)', () => {
    const writers = files.filter((f) => f !== 'migrations.ts' && WRITES_REWARDS.test(readFileSync(join(SQLITE, f), 'utf8')));
    expect(writers).toEqual(['ledger.ts']);
  });

  it('lives in a file that holds it and the reward queries only: at most 300 lines, as the house keeps its files', () => {
    const lines = readFileSync(join(SQLITE, 'ledger.ts'), 'utf8').split('\n').length - 1;
    expect(lines).toBeLessThanOrEqual(300);
    for (const f of ['balance.ts', 'guests.ts', 'streaks.ts']) expect(files, f).toContain(f);
  });
});
