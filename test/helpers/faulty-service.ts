// The payments service behind a proxy that breaks a fifth of the calls, one way or another: the
// chaos runs' (test/slow/relay/chaos*.test.ts) service, with the sandbox straight beside it for
// the operator's reconciliation.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { createSandbox } from '../../src/sandbox/index.js';

export const FAULTS = ['500 before forwarding', 'forward, then 500', 'forward, then drop the socket', 'answer after the timeout', 'reset'] as const;

// The chaos's own timing (a late answer, a client's pauses between retries): never a wait for a condition.
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `rnd`: the run's seeded randomness; `key`: the API key; `timeoutMs`: the relay's, which a late answer passes. */
export async function faultyService(rnd: () => number, key: string, timeoutMs: number) {
  const sandbox = createSandbox({ apiKey: key });
  const injected = new Map<string, number>();
  const proxy: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const fault = rnd() < 0.2 ? FAULTS[Math.floor(rnd() * FAULTS.length)]! : undefined;
      if (fault) injected.set(fault, (injected.get(fault) ?? 0) + 1);
      if (fault === 'reset') return void req.socket.destroy();
      if (fault === '500 before forwarding') return void res.writeHead(500, { 'content-type': 'application/json' }).end('{"success":false,"message":"Internal error"}');
      const body = chunks.length ? Buffer.concat(chunks) : undefined;
      const answer = await sandbox.fetch(
        new Request(`http://service${req.url}`, { method: req.method!, headers: req.headers as Record<string, string>, ...(body ? { body } : {}) }),
      );
      const text = await answer.text();
      if (fault === 'forward, then drop the socket') return void req.socket.destroy();
      if (fault === 'forward, then 500') return void res.writeHead(500, { 'content-type': 'application/json' }).end('{"success":false,"message":"Internal error"}');
      if (fault === 'answer after the timeout') await sleep(timeoutMs + 200);
      if (!res.destroyed) res.writeHead(answer.status, { 'content-type': 'application/json' }).end(text);
    });
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  const direct = serve({ fetch: sandbox.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise((r) => direct.once('listening', r));
  return {
    sandbox,
    injected,
    proxyUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    /** The service itself, straight, for the operator's reconciliation. */
    directUrl: `http://127.0.0.1:${(direct.address() as AddressInfo).port}`,
    close: () => {
      proxy.close();
      direct.close();
    },
  };
}

/** A client's retry loop in a chaos run: the same request (the same key) until the relay answers for good. */
export async function untilFinal<T>(send: () => Promise<Response>, final: (r: Response) => Promise<T | undefined>): Promise<T> {
  for (let attempt = 0; attempt < 2000; attempt++) {
    const r = await send().catch(() => undefined);
    const done = r && (await final(r).catch(() => undefined));
    if (done !== undefined) return done;
    await sleep(20 + Math.random() * 30);
  }
  throw new Error('no final answer');
}
