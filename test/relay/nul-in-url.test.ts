import { afterEach, describe, expect, inject, it } from 'vitest';
import { freshDatabase } from '../helpers/postgres.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';

const postgresUrl = inject('postgresUrl');
let relay: TestRelay | undefined;
afterEach(async () => {
  await relay?.stop();
  relay = undefined;
});

describe.each([['SQLite'], ['PostgreSQL']])('a NUL byte in a path or query, on %s', (store) => {
  it.runIf(store === 'SQLite' || postgresUrl)('is 400 bad_request, never a 500 from the database', async () => {
    const database: Record<string, string> =
      store === 'PostgreSQL' ? { RELAY_DATABASE_URL: await freshDatabase(postgresUrl, { migrated: true }), RELAY_SECRET: 'pg-relay-secret-of-at-least-32-characters' } : {};
    relay = await startTestRelay(database);
    const player = await relay.link('alice');
    const asPlayer = { authorization: `Bearer ${player.token}` };
    const asOperator = { authorization: `Bearer ${relay.adminToken}`, 'content-type': 'application/json' };
    const answers = [
      await fetch(`${relay.url}/v1/rewards/%00`, { headers: asPlayer }),
      await fetch(`${relay.url}/v1/rewards/abc%00def`, { headers: asPlayer }),
      await fetch(`${relay.url}/admin/api/recent?player=%00`, { headers: asOperator }),
      await fetch(`${relay.url}/admin/api/recent?achievement=a%00`, { headers: asOperator }),
      await fetch(`${relay.url}/admin/api/review/%00/reconcile`, { method: 'POST', headers: asOperator, body: '{}' }),
    ];
    for (const r of answers)
      expect([r.url.replace(relay.url, ''), r.status, r.headers.get('content-type')]).toEqual([r.url.replace(relay.url, ''), 400, 'application/problem+json']);
    // What is not a NUL still reads as before.
    expect((await fetch(`${relay.url}/v1/rewards/%2500`, { headers: asPlayer })).status).toBe(404);
  });
});
