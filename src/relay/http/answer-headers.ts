import type { Context } from 'hono';
import { type NodeOutgoing, nodeOutgoing } from './context.js';

/** Node's response while its head is unwritten (then only the answer's own headers remain to set), else undefined. */
export const openOutgoing = (c: Context): NodeOutgoing | undefined => {
  const outgoing = nodeOutgoing(c.env);
  return outgoing && typeof outgoing.setHeader === 'function' && !outgoing.headersSent ? outgoing : undefined;
};

/**
 * Sets a header every answer to this request carries, whatever the route answers (the security
 * headers, CORS). Under Node it goes on Node's response at once, and Node merges the answer's own
 * headers over it when it writes them; so the answer's headers stay a plain object, which
 * @hono/node-server writes straight to the socket, where c.header() makes Hono keep every header
 * of the answer in a Headers instance that is then copied and walked (~20 µs a request, bench/
 * claim-steps.ts). Elsewhere (fetch in process, Bun, Deno, edge runtimes) it is c.header(). Either
 * way a header the route's answer sets too is the answer's. `outgoing`: openOutgoing(c), when the
 * caller looked it up already (the door sets several).
 */
export function setAnswerHeader(c: Context, name: string, value: string, options?: { append?: boolean }, outgoing = openOutgoing(c)): void {
  if (!outgoing) return void c.header(name, value, options);
  if (options?.append && outgoing.appendHeader) outgoing.appendHeader(name, value);
  else outgoing.setHeader(name, value);
}
