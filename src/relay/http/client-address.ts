import { isIP } from 'node:net';

/**
 * Which proxies in front of the relay to believe about the client's address: the last `hops`
 * of them, or those at these addresses. Without it X-Forwarded-For is ignored, since anyone
 * can send one.
 */
export type TrustProxy = { hops: number } | { addresses: ReadonlySet<string> };

/** `RELAY_TRUST_PROXY`: a hop count (`1`), or a comma-separated list of proxy addresses. */
export function parseTrustProxy(value: string): TrustProxy {
  if (/^\d+$/.test(value.trim())) return { hops: Number(value) };
  const addresses = value.split(',').map((a) => normalize(a.trim())).filter(Boolean);
  const bad = addresses.find((a) => !isIP(a));
  if (bad) throw new Error(`RELAY_TRUST_PROXY: ${bad} is neither a hop count nor an IP address`);
  return { addresses: new Set(addresses) };
}

/** IPv4 clients of a dual-stack socket show as ::ffff:1.2.3.4. */
const normalize = (a: string) => a.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');

/**
 * The client's address: the socket's, or, when that socket is a trusted proxy, the address the
 * proxies say they forwarded for (read from the right, stopping at the first one not trusted).
 */
export function clientAddress(socketAddress: string, forwardedFor: string | undefined, trust: TrustProxy | undefined): string {
  const socket = normalize(socketAddress);
  if (!trust || !forwardedFor) return socket;
  const hops = forwardedFor.split(',').map((a) => normalize(a.trim())).filter((a) => isIP(a));
  if ('hops' in trust) return trust.hops > 0 ? (hops[Math.max(0, hops.length - trust.hops)] ?? socket) : socket;
  let address = socket;
  while (trust.addresses.has(address) && hops.length) address = hops.pop()!;
  return address;
}
