// What a request costs on its way through Node and @hono/node-server, which the cost table's
// in-process steps never see: a real server on loopback, driven by a raw keep-alive socket one
// request at a time, and a variant's cost is its CPU beyond a bare variant's (the client's share,
// the kernel's and the bare server's are the same in both, and cancel).

import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { Hono } from 'hono';
import { setAnswerHeader } from '../src/relay/http/answer-headers.js';
import { type RelayContext, type RelayEnv, readText } from '../src/relay/http/context.js';
import { readWithin } from '../src/relay/http/middleware/body-deadline.js';
import { SECURITY_HEADERS } from '../src/relay/http/security-headers.js';

export type FetchHandler = (request: Request, env: unknown) => Response | Promise<Response>;

/** A Node server for `fetch` on loopback, as @hono/node-server serves it, and its port. */
export async function loopbackServer(fetch: FetchHandler): Promise<{ server: Server; port: number }> {
  const server = createServer(getRequestListener(fetch as never));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port };
}

/**
 * A raw keep-alive HTTP/1.1 client on loopback: `roundTrip` sends a request's bytes and resolves
 * once its answer is in. `check` sees each answer first (and throws on one it does not expect).
 */
export async function loopbackClient(port: number, check?: (answer: string) => void): Promise<{ socket: Socket; roundTrip: (request: string) => Promise<void> }> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  socket.setNoDelay(true);
  let waiting: (() => void) | undefined;
  let seen = '';
  socket.on('data', (d: Buffer) => {
    seen += d.toString('latin1');
    // One answer at a time, each with a Content-Length: done once its body is in.
    const head = seen.indexOf('\r\n\r\n');
    if (head < 0) return;
    const length = Number(/content-length: (\d+)/i.exec(seen.slice(0, head))?.[1] ?? 0);
    if (seen.length < head + 4 + length) return;
    check?.(seen);
    seen = '';
    const w = waiting;
    waiting = undefined;
    w?.();
  });
  const roundTrip = (request: string) =>
    new Promise<void>((resolve) => {
      waiting = resolve;
      socket.write(request);
    });
  return { socket, roundTrip };
}

/** A server for `fetch` on loopback, and one client of it. */
async function serveOnLoopback(fetch: FetchHandler): Promise<{ server: Server; socket: Socket; roundTrip: (request: string) => Promise<void> }> {
  const { server, port } = await loopbackServer(fetch);
  return { server, ...(await loopbackClient(port)) };
}

const cpuNow = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/**
 * CPU µs per request that `variant` costs beyond `bare`, both served over loopback: batches of
 * the two in turns, the median of the batches' differences (a busy machine moves both alike).
 */
export async function httpBeyond(variant: FetchHandler, bare: FetchHandler, request: () => string, ops = 1000, batches = 5): Promise<number> {
  const a = await serveOnLoopback(variant);
  const b = await serveOnLoopback(bare);
  const run = async (rt: (r: string) => Promise<void>, n: number) => {
    const t0 = cpuNow();
    for (let i = 0; i < n; i++) await rt(request());
    return (cpuNow() - t0) / n;
  };
  try {
    await run(a.roundTrip, ops);
    await run(b.roundTrip, ops);
    const diffs: number[] = [];
    for (let i = 0; i < batches; i++) diffs.push((await run(a.roundTrip, ops)) - (await run(b.roundTrip, ops)));
    diffs.sort((x, y) => x - y);
    return Math.max(0, diffs[batches >> 1]!);
  } finally {
    for (const s of [a, b]) {
      s.socket.destroy();
      s.server.closeAllConnections();
      s.server.close();
    }
  }
}

/** A POST as a game sends it: raw bytes on the wire. */
export function rawPost(path: string, headers: Record<string, string>, body: string): string {
  const lines = Object.entries({ host: '127.0.0.1', connection: 'keep-alive', ...headers, 'content-length': String(Buffer.byteLength(body)) }).map(([k, v]) => `${k}: ${v}`);
  return `POST ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n${body}`;
}

/**
 * The cost table's rows for what Node and @hono/node-server do with a claim (the relay's own ways
 * beside the ways they replaced): reading its body, and writing its answer's headers.
 */
export async function nodeSideSteps(token: string, body: string, record: unknown): Promise<Array<{ step: string; us: number; what: string }>> {
  const onNode = (route: (c: RelayContext) => Response | Promise<Response>) => {
    const app = new Hono<RelayEnv>().post('/v1/rewards', async (c) => {
      // As in the relay, the route runs at once, in Node's 'request' event: a middleware's `await
      // next()` awaits nothing before the route (an earlier version awaited here, and so measured
      // a body at hand that the relay never had).
      c.set('maxBodyBytes', 4096);
      return route(c);
    });
    return (req: Request, env: unknown) => app.fetch(req, env as never);
  };
  const wire = () => rawPost('/v1/rewards', { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'idempotency-key': crypto.randomUUID() }, body);
  const bare = onNode((c) => c.json(record, 201));
  const headersBy = (set: (c: RelayContext, name: string, value: string) => void) =>
    onNode((c) => {
      for (const [name, value] of SECURITY_HEADERS) set(c, name, value);
      set(c, 'Vary', 'Origin');
      return c.json(record, 201);
    });
  return [
    {
      step: 'body read through node-server, in its deadline',
      us: await httpBeyond(
        onNode(async (c) => {
          await readWithin(() => c.req.text(), 10_000);
          return c.json(record, 201);
        }),
        bare,
        wire,
      ),
      what: 'text(): listeners on the socket; the deadline: a timer, a race (readText before issue 39)',
    },
    {
      step: '  read at hand (readText under Node)',
      us: await httpBeyond(
        onNode(async (c) => {
          await readText(c);
          return c.json(record, 201);
        }),
        bare,
        wire,
      ),
      what: "http/context.ts bodyAtHand: the body in Node's buffer, read a turn after the headers' event",
    },
    {
      step: 'the answer, its headers set with c.header()',
      us: await httpBeyond(
        headersBy((c, name, value) => c.header(name, value)),
        bare,
        wire,
      ),
      what: 'security headers and Vary in a Headers instance, copied and walked by node-server (before issue 39)',
    },
    {
      step: "  the same set on Node's response",
      us: await httpBeyond(headersBy(setAnswerHeader), bare, wire),
      what: "http/answer-headers.ts: the answer's own headers stay a plain object",
    },
  ];
}
