// Relays on one PostgreSQL database must verify each other's player tokens: one whose
// RELAY_SECRET shares none with the others refuses to start, naming the setting; a rotation that
// overlaps (NEW,OLD) starts.
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { loadConfig, openConfiguredStore } from '../../src/relay/index.js';
import { freshDatabase } from '../helpers/postgres.js';

const url = inject('postgresUrl');

describe.skipIf(!url)('relays with different secrets on one database', () => {
  it('refuses to start a relay whose secret the others do not share, and starts one that overlaps in a rotation', async () => {
    const RELAY_DATABASE_URL = await freshDatabase(url);
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
