import type { Context, MiddlewareHandler } from 'hono';
import type { z } from 'zod';
import type { PlayerClaims, PlayerTokens } from '../core/player-tokens.js';
import type { StreamTickets } from '../core/stream-tickets.js';
import { readWithin } from './middleware/body-deadline.js';
import type { RateLimiter } from './middleware/rate-limit.js';
import { RelayProblem } from './problems.js';

/**
 * Node's request as @hono/node-server hands it over (`env.incoming`), as far as the relay reads it:
 * its socket's address, and a body that has all come (read at once, see readText).
 */
export interface NodeIncoming {
  socket?: { remoteAddress?: string };
  /** Node's IncomingMessage: true once the whole message is parsed; its body is buffered, readableLength bytes of it. */
  complete?: boolean;
  readableLength?: number;
  readableDidRead?: boolean;
  readableFlowing?: boolean | null;
  read?: () => Buffer | string | null;
  /** Its headers as they came, name and value in turn. */
  rawHeaders?: string[];
}

/**
 * Node's response as @hono/node-server hands it over (`env.outgoing`), as far as the relay writes
 * to it: the headers every answer carries (answer-headers.ts), and event streams (event-stream/).
 */
export interface NodeOutgoing {
  readonly headersSent: boolean;
  setHeader(name: string, value: string): unknown;
  appendHeader?(name: string, value: string): unknown;
  writeHead(status: number, headers: Record<string, string>): unknown;
  flushHeaders(): void;
  write(chunk: string): boolean;
  end(): unknown;
  destroy(): unknown;
  on(event: 'drain' | 'close', listener: () => void): unknown;
  readonly writableEnded: boolean;
  readonly destroyed: boolean;
}

/**
 * Node's response for this request, when @hono/node-server passed it, else undefined: the relay
 * stays a web-standard handler (in-process `fetch`, Bun, Deno, edge) and answers as one there.
 */
export function nodeOutgoing(env: unknown): NodeOutgoing | undefined {
  const out = (env as { outgoing?: Partial<NodeOutgoing> } | undefined)?.outgoing;
  return out && typeof out.writeHead === 'function' && typeof out.write === 'function' && typeof out.flushHeaders === 'function' && typeof out.on === 'function'
    ? (out as NodeOutgoing)
    : undefined;
}

/** What the relay's handlers share: the authenticated player, and Node's socket when there is one. */
export type RelayEnv = {
  Variables: { player: PlayerClaims; maxBodyBytes: number; bodyTimeoutMs?: number; clientKey: string | undefined };
  Bindings: { incoming?: NodeIncoming; outgoing?: NodeOutgoing } | undefined;
};
export type RelayContext = Context<RelayEnv>;

/**
 * A request header as `c.req.header(name)` reads it (each value of the name, joined by ", "; `name`
 * in lower case). Under Node it is read from the socket's raw headers: the first c.req.header()
 * makes @hono/node-server build a Headers of every header of the request (3–7 µs, the cost table's
 * row "headers from the socket"), which a claim otherwise never needs.
 */
export function requestHeader(c: Context, name: string): string | undefined {
  const raw = (c.env as RelayEnv['Bindings'])?.incoming?.rawHeaders;
  if (!raw) return c.req.header(name);
  let value: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const n = raw[i]!;
    if (n.length === name.length && (n === name || n.toLowerCase() === name)) value = value === undefined ? raw[i + 1]! : `${value}, ${raw[i + 1]}`;
  }
  return value;
}

/** The socket's address under Node (@hono/node-server); undefined without a socket (in-process `fetch`, Bun, Deno, edge). */
export const socketAddress = (c: RelayContext): string | undefined => c.env?.incoming?.socket?.remoteAddress;

/**
 * The key the caller's address counts under in every per-address limit (`addressKey`: IPv6 by
 * its /64), as the relay decided at the door (through trusted proxies only). Undefined when the
 * relay cannot know the address: per-address limits then pass the request (the relay warned).
 */
export const clientKey = (c: RelayContext): string | undefined => c.get('clientKey');

/**
 * The body as text, 413 past the limit, never buffered beyond it. A declared length is checked
 * before reading and read through `text()`, which @hono/node-server serves straight from the
 * socket; a chunked body goes through the web stream, counted as it comes and cut off at the limit.
 */
export async function readText(c: RelayContext, max = c.get('maxBodyBytes')): Promise<string> {
  const now = bodyAtHand(c, max);
  if (now !== undefined) return now;
  // A route that reads at once runs inside Node's 'request' event, which its parser emits from the
  // headers, before it parses the body that came in the same packet: a turn later, it has.
  if (c.env?.incoming) {
    await undefined;
    const later = bodyAtHand(c, max);
    if (later !== undefined) return later;
  }
  return readWithin(() => readTextNow(c, max), c.get('bodyTimeoutMs'));
}

const utf8 = new TextDecoder();

/**
 * Under Node, a body that has all come already (a game's claim comes in the packet of its headers,
 * and Node has buffered it a turn after the route began, see readText) is taken from Node's buffer at once: no
 * deadline to keep, no promise, no listeners on the socket (together ~35 µs a request, bench/
 * claim-steps.ts). Decoded as text() decodes it. Undefined (read as usual) on any other runtime,
 * when the body is still coming, or when something already read it.
 */
function bodyAtHand(c: RelayContext, max: number): string | undefined {
  const incoming = c.env?.incoming;
  if (!incoming || incoming.readableDidRead || incoming.readableFlowing || typeof incoming.read !== 'function') return undefined;
  const declared = requestHeader(c, 'content-length');
  if (declared !== undefined && !(Number(declared) <= max)) throw new RelayProblem('payload_too_large');
  // All of it is in: Node says the message is complete, or holds as many bytes as were declared
  // (it buffers a body as it parses it, and marks the message complete only a turn later).
  if (!incoming.complete && !(declared !== undefined && incoming.readableLength === Number(declared))) return undefined;
  const chunk = incoming.read();
  if (chunk === null) return '';
  const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
  if (bytes.byteLength > max) throw new RelayProblem('payload_too_large');
  const text = utf8.decode(bytes);
  // Read once: a later c.req.text() answers the same text (the socket's body is gone by then).
  // (Hono keeps the promises there; its types say functions.)
  (c.req.bodyCache as { text?: Promise<string> }).text = Promise.resolve(text);
  return text;
}

async function readTextNow(c: RelayContext, max: number): Promise<string> {
  const declared = requestHeader(c, 'content-length');
  if (declared !== undefined) {
    if (!(Number(declared) <= max)) throw new RelayProblem('payload_too_large');
    return c.req.text();
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = c.req.raw.body?.getReader();
  for (let r = await reader?.read(); r && !r.done; r = await reader!.read()) {
    size += r.value.byteLength;
    if (size > max) {
      await reader!.cancel();
      throw new RelayProblem('payload_too_large');
    }
    chunks.push(r.value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A UTF-16 surrogate without its other half: not a character, and not encodable in a URL. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const MAY_BE_ILL_FORMED = /\\u|[\0\uD800-\uDFFF]/;

/**
 * Strings in a body must be valid Unicode: a lone surrogate cannot be sent on (URLs, logs, the
 * service). Nor may a string or key hold NUL, which PostgreSQL's text and jsonb cannot store.
 */
function wellFormed(key: string, value: unknown): unknown {
  if (key.includes('\0') || (typeof value === 'string' && value.includes('\0'))) throw new RelayProblem('bad_request', 'Strings must not contain NUL (\\u0000)');
  if (typeof value === 'string' && LONE_SURROGATE.test(value)) throw new RelayProblem('bad_request', 'Strings must be valid Unicode (no lone surrogates)');
  return value;
}

/** A JSON object from text: 400 for bad JSON, for anything but an object (`null`, arrays, numbers), and for ill-formed strings. */
export function parseJsonObject(text: string): Record<string, unknown> {
  let json: unknown;
  try {
    // NUL and lone surrogates reach a parsed string only from a `\u` escape (raw, NUL is not JSON,
    // and decoded UTF-8 holds no lone surrogate) or from raw surrogates: without either, every
    // string is well-formed, and the reviver (four times the parse) has nothing to find.
    json = MAY_BE_ILL_FORMED.test(text) ? JSON.parse(text, wellFormed) : JSON.parse(text);
  } catch (err) {
    if (err instanceof RelayProblem) throw err;
    throw new RelayProblem('bad_request', 'The body is not valid JSON');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new RelayProblem('bad_request', 'The body must be a JSON object');
  return json as Record<string, unknown>;
}

/** Parses a JSON body against a schema: 415 for another content type, 413 too large, 400 for bad JSON or fields. */
export async function readJson<S extends z.ZodType>(c: RelayContext, schema: S, max = c.get('maxBodyBytes')): Promise<z.infer<S>> {
  return (await readJsonText(c, schema, max)).data;
}

/** As readJson, with the body's text too (to hand on: the request's own body is read by then). */
export async function readJsonText<S extends z.ZodType>(c: RelayContext, schema: S, max = c.get('maxBodyBytes')): Promise<{ data: z.infer<S>; text: string }> {
  const type = requestHeader(c, 'content-type') ?? '';
  if (!/^application\/([a-z.+-]*\+)?json\b/i.test(type)) throw new RelayProblem('unsupported_media_type');
  const text = await readText(c, max);
  const r = schema.safeParse(parseJsonObject(text));
  if (!r.success) {
    const detail = r.error.issues.map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message)).join('; ');
    throw new RelayProblem('bad_request', detail);
  }
  return { data: r.data, text };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The Idempotency-Key header's UUID, or 400. The IETF draft sends it as a structured-field string: "<uuid>". Bare is accepted too. */
export function idempotencyKeyOf(raw: string): string {
  const key = raw.length > 1 && raw.startsWith('"') && raw.endsWith('"') ? raw.slice(1, -1) : raw;
  if (!UUID.test(key)) throw new RelayProblem('idempotency_key_required');
  return key;
}

/** Takes one from the limiter under `key` (`ip:…`, `user:…`), or throws 429. No key (no address): nothing to count. */
export function rateLimited(limiter: RateLimiter, key: string | undefined): void {
  if (key === undefined) return;
  const wait = limiter(key);
  if (wait > 0) throw new RelayProblem('rate_limited', `Try again in ${wait} s`, { 'Retry-After': `${wait}` });
}

/** The caller's address as a limiter's key under `scope` (`ip:2001:db8::/64`); undefined when unknown. */
export const addressScope = (c: RelayContext, scope: string): string | undefined => {
  const key = clientKey(c);
  return key === undefined ? undefined : `${scope}:${key}`;
};

const TICKET_REFUSED = {
  invalid: 'This is no ticket of the relay: get one with POST /v1/events/ticket',
  expired: 'The ticket expired (they last 60 s): get a new one with POST /v1/events/ticket',
  used: 'The ticket was used already (once each): get a new one with POST /v1/events/ticket',
} as const;

/**
 * Requires `Authorization: Bearer <player token>` and rate-limits the player and the address.
 * EventSource cannot send headers: `GET /v1/events` also takes a single-use `?ticket=` (and,
 * deprecated, `?token=`, which puts the long-lived token in access logs).
 */
export function requirePlayer(
  tokens: PlayerTokens,
  limiter: RateLimiter,
  tickets?: StreamTickets,
  /** Balance mode: a guest's token stops working once the guest linked a gamertag. */
  retired?: (player: PlayerClaims) => Promise<boolean>,
): MiddlewareHandler<RelayEnv> {
  return async function requirePlayer(c, next) {
    rateLimited(limiter, addressScope(c, 'ip'));
    const player = playerOf(c);
    if (player.guest && retired && (await retired(player))) throw new RelayProblem('unauthorized', "This guest linked a gamertag: use the player's token");
    rateLimited(limiter, `user:${player.userId}`);
    c.set('player', player);
    await next();
  };

  function playerOf(c: RelayContext): PlayerClaims {
    const auth = requestHeader(c, 'authorization') ?? '';
    const stream = c.req.path === '/v1/events';
    const ticket = stream && !auth ? c.req.query('ticket') : undefined;
    if (tickets && ticket !== undefined) {
      // A HEAD opens no stream (routes/events.ts): it is told what a GET would be, the ticket left unused.
      const r = c.req.method === 'HEAD' ? tickets.peek(ticket) : tickets.redeem(ticket);
      if ('player' in r) return r.player;
      if (r.refused === 'busy') throw new RelayProblem('rate_limited', 'Too many event streams opening on this relay: try again in a minute', { 'Retry-After': '60' });
      throw new RelayProblem('unauthorized', TICKET_REFUSED[r.refused]);
    }
    const token = auth.startsWith('Bearer ') ? auth.slice(7).trim() : stream ? c.req.query('token') : undefined;
    const player = token ? tokens.verify(token) : undefined;
    if (!player) throw new RelayProblem('unauthorized', 'Link the player again with POST /v1/players');
    return player;
  }
}
