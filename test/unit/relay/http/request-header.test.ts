// requestHeader reads Node's raw headers as c.req.header() reads the Headers built from them.
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { type RelayEnv, requestHeader } from '../../../../src/relay/http/context.js';

const RAW = [
  'Host',
  'relay',
  'Authorization',
  'Bearer t',
  'Origin',
  'https://game.example',
  'X-Forwarded-For',
  '203.0.113.7',
  'x-forwarded-for',
  '198.51.100.1',
  'Content-Type',
  'application/json',
];
const NAMES = ['host', 'authorization', 'origin', 'x-forwarded-for', 'content-type', 'idempotency-key'];

async function both(name: string) {
  let seen: [string | undefined, string | undefined] = [undefined, undefined];
  const app = new Hono<RelayEnv>().get('*', (c) => {
    seen = [requestHeader(c, name), c.req.header(name)];
    return c.body(null);
  });
  const headers = new Headers();
  for (let i = 0; i < RAW.length; i += 2) headers.append(RAW[i]!, RAW[i + 1]!);
  await app.fetch(new Request('http://relay/v1/x', { headers }), { incoming: { rawHeaders: RAW } });
  return seen;
}

describe('requestHeader', () => {
  it.each(NAMES)('reads %s from the raw headers as c.req.header() does (any case, repeated values joined)', async (name) => {
    const [raw, hono] = await both(name);
    expect(raw).toBe(hono);
  });

  it('joins a repeated header and ignores case', async () => {
    expect((await both('x-forwarded-for'))[0]).toBe('203.0.113.7, 198.51.100.1');
    expect((await both('idempotency-key'))[0]).toBeUndefined();
  });

  it('reads c.req.header() where there is no Node request (fetch in process, Bun, Deno)', async () => {
    const app = new Hono<RelayEnv>().get('*', (c) => c.text(requestHeader(c, 'origin') ?? 'none'));
    expect(await (await app.fetch(new Request('http://relay/', { headers: { Origin: 'https://a.example' } }))).text()).toBe('https://a.example');
  });
});
