import { BlockList, isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { family, forwardedAddress, normalize, parse, type TrustProxy } from '../ip-address.js';
import { RelayProblem } from './problems.js';

export { parseTrustProxy, type TrustProxy } from '../ip-address.js';

const holds = (list: BlockList, address: string) => isIP(address) !== 0 && list.check(address, family(address));

/** Loopback and private networks: where a proxy the operator runs would connect from. */
const PRIVATE = new BlockList();
for (const [net, prefix] of [
  ['127.0.0.0', 8],
  ['10.0.0.0', 8],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['100.64.0.0', 10],
  ['169.254.0.0', 16],
] as const)
  PRIVATE.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
] as const)
  PRIVATE.addSubnet(net, prefix, 'ipv6');

/**
 * The client's address: the socket's, or, when that socket is a trusted proxy, the address the
 * proxies say they forwarded for (see TrustProxy). Every entry is read where it stands: one
 * that is no address, where an address the relay believes should be, is a 400 that says so.
 * Skipping it instead made the entry left of it, which the client writes itself, the client's
 * address; and an entry written with its port (`203.0.113.7:4711`) was such an entry.
 */
export function clientAddress(socketAddress: string, forwardedFor: string | undefined, trust: TrustProxy | undefined): string {
  const socket = normalize(socketAddress);
  if (!trust || !forwardedFor) return socket;
  const entries = forwardedFor.split(',').map((a) => a.trim());
  if ('hops' in trust) return trust.hops > 0 && holds(PRIVATE, socket) ? believed(entries[Math.max(0, entries.length - trust.hops)]!) : socket;
  let address = socket;
  while (holds(trust.proxies, address) && entries.length) address = believed(entries.pop()!);
  return address;
}

function believed(entry: string): string {
  const address = forwardedAddress(entry);
  if (address !== undefined) return address;
  throw new RelayProblem(
    'bad_request',
    `X-Forwarded-For names the client ${JSON.stringify(entry.slice(0, 64))}, which is not an IP address (203.0.113.7, 203.0.113.7:4711, 2001:db8::1 or [2001:db8::1]:4711). RELAY_TRUST_PROXY says to believe this entry`,
  );
}

/**
 * The key every per-address limit counts under (rate limits, wrong operator tokens, event
 * streams, webhook deliveries, links, the address cap): an IPv4 address as it is, an IPv6 one
 * by its /64 (what one home or one server is usually given), written `2001:db8:1:2::/64`.
 * Every spelling of one address gives one key: IPv4-mapped IPv6 is the IPv4 address, and so is
 * an address of the well-known NAT64 prefix (64:ff9b::/96, an IPv4 client translated); an
 * embedded IPv4 tail counts in its true /64. Undefined when there is no address to count.
 */
export function addressKey(address: string | undefined): string | undefined {
  if (address === undefined) return undefined;
  // Every request asks, mostly for the few addresses of the connections kept alive: parsing one
  // cost more than the rest of the door together (4 µs).
  const known = keys.get(address);
  if (known !== undefined || keys.has(address)) return known;
  if (keys.size >= KEYS_KEPT) keys.clear();
  const key = keyOf(address);
  keys.set(address, key);
  return key;
}

/** Addresses whose key is remembered; past it they are forgotten all at once. */
const KEYS_KEPT = 10_000;
const keys = new Map<string, string | undefined>();

function keyOf(address: string | undefined): string | undefined {
  const parsed = address === undefined ? undefined : parse(address.trim());
  if (!parsed) return undefined;
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const v6 = parsed as ipaddr.IPv6;
  if (v6.range() === 'rfc6052') {
    const [, , , , , , hi = 0, lo = 0] = v6.parts;
    return ipaddr.fromByteArray([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]).toString();
  }
  return `${new ipaddr.IPv6([...v6.parts.slice(0, 4), 0, 0, 0, 0]).toString()}/64`;
}
