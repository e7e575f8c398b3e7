import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';

let relay: TestRelay | undefined;
let other: Database.Database | undefined;
afterEach(async () => {
  if (other?.inTransaction) other.exec('COMMIT');
  other?.close();
  other = undefined;
  await relay?.stop();
  relay = undefined;
});

/**
 * Another connection to the relay's ledger holding its write lock, as another process on the
 * file does while it writes (`rewardbus-relay review` or `tournament` on the SQLite ledger).
 */
function holdWriteLock(dataDir: string) {
  other = new Database(join(dataDir, 'ledger.sqlite'));
  other.exec('BEGIN IMMEDIATE');
  return () => other!.exec('COMMIT');
}

describe('the SQLite ledger locked by another process', () => {
  it('waits for a moment another process writes the file, within its busy timeout, and pays the claim', async () => {
    relay = await startTestRelay();
    const { token } = await relay.link('alice');
    setTimeout(holdWriteLock(relay.dataDir), 300);
    const r = await relay.claim(token, { achievementId: 'first-coin' });
    expect([r.status, r.body.status ?? r.body.code]).toEqual([201, 'paid']);
  });

  it('answers a claim it cannot write before its busy timeout 503 store_unavailable with Retry-After, as an outage, not 500', async () => {
    relay = await startTestRelay();
    const { token } = await relay.link('alice');
    const release = holdWriteLock(relay.dataDir);
    const key = crypto.randomUUID();
    const r = await relay.claim(token, { achievementId: 'first-coin' }, key);
    release();
    expect([r.status, r.headers.get('content-type'), r.headers.get('retry-after'), r.body.code]).toEqual([503, 'application/problem+json', '5', 'store_unavailable']);
    // The relay said why, naming the request; nothing was paid, and the same key pays once the file is free.
    const said = relay.logs.map((l) => JSON.parse(l) as { event?: string; path?: string; err?: { message?: string; code?: string } }).find((l) => l.event === 'store_unavailable');
    expect(said).toMatchObject({ path: '/v1/rewards', err: { code: 'SQLITE_BUSY', message: expect.stringMatching(/locked/) } });
    expect(relay.sandbox!.payments()).toHaveLength(0);
    expect((await relay.claim(token, { achievementId: 'first-coin' }, key)).body.status).toBe('paid');
    expect(relay.sandbox!.payments()).toHaveLength(1);
  });
});
