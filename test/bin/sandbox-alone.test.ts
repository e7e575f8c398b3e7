import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SIGNATURE_HEADER } from '../../src/contract/payments-api.js';
import { signatureValid } from '../../src/relay/http/routes/webhooks.js';
import { startChild, stop } from '../helpers/processes.js';
import { relayCommand, startRelayCommand } from '../helpers/relay-command.js';

// `rewardbus-relay sandbox` (npm run sandbox) as a rehearsal's payments service, in front of a
// live-mode relay: with SANDBOX_WEBHOOK_SECRET its webhooks are signed as the relay verifies them.

const KEY = 'alone-key';
const children: Array<Parameters<typeof stop>[0]> = [];
let signed: string;
let unsigned: string;
let relay: string;
let startLine: string;

beforeAll(async () => {
  // NEW,OLD as the relay's WEBHOOK_SECRET is written while it rotates: the sandbox signs with NEW.
  const [a, b] = await Promise.all([
    startChild(relayCommand('sandbox', '0'), { SANDBOX_API_KEY: KEY, SANDBOX_WEBHOOK_SECRET: 'new-secret,old-secret' }, /sandbox on (http:\/\/\S+)(.*)/),
    startChild(relayCommand('sandbox', '0'), { SANDBOX_API_KEY: KEY, SANDBOX_WEBHOOK_SECRET: '' }, /sandbox on (http:\/\/\S+)/),
  ]);
  children.push(a.child, b.child);
  [signed, unsigned, startLine] = [a.match[1]!, b.match[1]!, a.match[0]];
  const r = await startRelayCommand({
    PAYMENTS_API_KEY: KEY,
    PAYMENTS_BASE_URL: signed,
    RELAY_PUBLIC_URL: 'https://relay.example.com',
    RELAY_DATA_DIR: mkdtempSync(join(tmpdir(), 'rewardbus-sandbox-alone-')),
    WEBHOOK_SECRET: 'new-secret',
  });
  children.push(r.child);
  relay = r.url;
});
afterAll(() => Promise.all(children.map(stop)));

/** A session made at this sandbox, its webhooks sent to the relay; then the widget's test card. */
async function purchase(sandboxUrl: string) {
  const made = await fetch(`${sandboxUrl}/api/v1/ramp-widget`, {
    method: 'POST',
    headers: { apikey: KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'p@example.com', webhook_url: `${relay}/v1/webhooks/payments`, reference_id: `ref-${Math.random()}` }),
  });
  const { session_id, widget_url } = ((await made.json()) as { data: { session_id: string; widget_url: string } }).data;
  // Its widget is where it listens, on the port it picked (`sandbox 0`), never port 0.
  expect(widget_url).toBe(`${sandboxUrl}/widget/${session_id}`);
  const done = await fetch(`${sandboxUrl}/widget/${session_id}/complete`, { method: 'POST' });
  return ((await done.json()) as { webhookStatus: number }).webhookStatus;
}

describe('the standalone sandbox in front of a live-mode relay', () => {
  it('says whether it signs; with SANDBOX_WEBHOOK_SECRET the relay takes its webhooks, without it the relay refuses them', async () => {
    expect(startLine).toContain('signed with SANDBOX_WEBHOOK_SECRET');
    expect(await purchase(signed)).toBe(200);
    expect(await purchase(unsigned)).toBe(401);
  });

  it("signs a withdrawal request's callback the same way", async () => {
    const got: Array<{ headers: IncomingHttpHeaders; raw: string }> = [];
    const game = createServer((req, res) => {
      let raw = '';
      req.on('data', (d) => (raw += d));
      req.on('end', () => {
        got.push({ headers: req.headers, raw });
        res.end();
      });
    });
    await new Promise<void>((r) => game.listen(0, '127.0.0.1', r));
    try {
      const callbackUrl = `http://127.0.0.1:${(game.address() as AddressInfo).port}/cb`;
      const made = await fetch(`${signed}/_sandbox/withdrawal-requests`, { method: 'POST', body: JSON.stringify({ amountSats: 50, callbackUrl }) });
      const { id } = ((await made.json()) as { data: { id: string } }).data;
      expect((await fetch(`${signed}/_sandbox/withdrawal-requests/${id}/pay`, { method: 'POST' })).status).toBe(200);
      expect(got).toHaveLength(1);
      const signature = got[0]!.headers[DEFAULT_SIGNATURE_HEADER.toLowerCase()] as string;
      expect(signatureValid('new-secret', got[0]!.raw, signature)).toBe(true);
      expect(signatureValid('old-secret', got[0]!.raw, signature)).toBe(false);
      expect(JSON.parse(got[0]!.raw)).toMatchObject({ id, status: 'completed', callbackUrl });
    } finally {
      await new Promise((r) => game.close(r));
    }
  });
});

/** `rewardbus-relay sandbox …args` run to its end: its exit code and what it said. */
function sandbox(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, relayCommand('sandbox', ...args), { env: { ...process.env, ...env }, timeout: 30_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? (child.exitCode ?? null) : 0, stdout, stderr }),
    );
  });
}

describe('the standalone sandbox that cannot listen', () => {
  it('on a port in use says so, naming the port, and exits 1 without a stack trace', async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = String((taken.address() as AddressInfo).port);
    try {
      const r = await sandbox([port]);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr.split('\n')[0]).toBe(`The sandbox port ${port} is in use on 127.0.0.1: stop what runs there, or choose another (npm run sandbox -- PORT, or SANDBOX_PORT).`);
      expect(r.stderr).not.toContain('    at ');
    } finally {
      await new Promise((r) => taken.close(r));
    }
  });

  it('given a port that is no port, names where it came from (SANDBOX_PORT or the command line) and the value', async () => {
    const [fromEnv, fromArgs] = await Promise.all([sandbox([], { SANDBOX_PORT: 'abc' }), sandbox(['99999'])]);
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr.split('\n')[0]).toBe('SANDBOX_PORT "abc" is not accepted: it must be a whole number from 0 to 65535.');
    expect(fromArgs.code).toBe(2);
    expect(fromArgs.stderr.split('\n')[0]).toBe('The sandbox port "99999" is not accepted: it must be a whole number from 0 to 65535. See rewardbus-relay --help.');
  });
});
