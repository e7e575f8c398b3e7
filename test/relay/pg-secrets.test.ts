// Relays on one PostgreSQL database must verify each other's player tokens: one whose
// RELAY_SECRET shares none with the others refuses to start, naming the setting; a rotation that
// overlaps (NEW,OLD) starts.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { loadConfig, openConfiguredStore } from '../../src/relay/index.js';
import { SecretMismatchError } from '../../src/relay/store/postgres/store.js';
import { freshDatabase } from '../helpers/postgres.js';

const url = inject('postgresUrl');

describe.skipIf(!url)('relays with different secrets on one database', () => {
  it('refuses to start a relay whose secret the others do not share, and starts one that overlaps in a rotation', async () => {
    const RELAY_DATABASE_URL = await freshDatabase(url, { migrated: true });
    const [oldSecret, newSecret, stranger] = [randomUUID() + randomUUID(), randomUUID() + randomUUID(), randomUUID() + randomUUID()];
    const open = (RELAY_SECRET: string) => openConfiguredStore(loadConfig({ RELAY_DATABASE_URL, RELAY_SECRET, RELAY_DATA_DIR: mkdtempSync(join(tmpdir(), 'rewardbus-secrets-')) }));
    const first = await open(oldSecret);
    await expect(open(stranger)).rejects.toMatchObject({ setting: 'RELAY_SECRET', message: expect.stringContaining('shares no secret') });
    // A rotation: NEW,OLD verifies the old tokens; then NEW alone, once every relay has moved on.
    const rotating = await open(`${newSecret},${oldSecret}`);
    const moved = await open(newSecret);
    await Promise.all([first.close(), rotating.close(), moved.close()]);
  });
});

// Issue 34, finding 10: the hint said "NEW,OLD on each in turn, then NEW", which, followed on one
// relay of two, has that relay sign with NEW while the other still verifies OLD only: the same
// player got 200 401 200 401 through nginx. It must give the order docs/deploy.md §7 gives.
describe('the RELAY_SECRET mismatch hint (finding 10)', () => {
  it("says the documented order for several relays: OLD,NEW on all, then NEW,OLD on all, then NEW; the docs' table says the same", () => {
    const hint = new SecretMismatchError().message;
    expect(hint).not.toMatch(/NEW,OLD on each in turn/);
    const order = /OLD,NEW\b[^.]*\ball\b[^.]*NEW,OLD\b[^.]*\ball\b[^.]*\bNEW\b/;
    expect(hint).toMatch(order);
    const row = readFileSync('docs/deploy.md', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('| `RELAY_SECRET`'));
    expect(row?.slice(row.indexOf('Several relays'))).toMatch(order);
  });
});
