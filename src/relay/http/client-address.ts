import { BlockList, isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Which proxies in front of the relay to believe about the client's address (X-Forwarded-For).
 * Without it X-Forwarded-For is ignored, since anyone can send one.
 *
 * - `{ hops: n }` (`RELAY_TRUST_PROXY=1`): the n-th address from the right of X-Forwarded-For,
 *   believed only when the socket itself is on loopback or a private network (127.0.0.0/8, ::1,
 *   10/8, 172.16/12, 192.168/16, 100.64/10, 169.254/16, fc00::/7, fe80::/10): a proxy on this
 *   machine or this network. A client reaching the relay directly from a public address is
 *   known by its socket, whatever it sends. A client that can reach the relay from a private
 *   network could still name itself: there, list the proxies instead.
 * - `{ proxies }` (`RELAY_TRUST_PROXY=10.0.0.5,10.0.1.0/24`): the socket must be one of these
 *   addresses or ranges; X-Forwarded-For is then read from the right through every listed
 *   proxy, and the first address that is not one is the client.
 */
export type TrustProxy = { hops: number } | { proxies: BlockList };

/**
 * One spelling per address: an IPv4 client of a dual-stack socket (`::ffff:1.2.3.4`, or
 * `::ffff:102:304`) is its IPv4 address; IPv6 in its compact lower-case form, an embedded IPv4
 * tail read as the two groups it is. Not an address: as given (isIP then refuses it).
 */
const normalize = (a: string): string => {
  const parsed = parse(a);
  return parsed ? parsed.toString() : a;
};

function parse(a: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  if (!ipaddr.isValid(a)) return undefined;
  const parsed = ipaddr.process(a);
  // Only the four-part decimal form for IPv4: ipaddr also reads `1`, `0x7f.1` or `010.0.0.1`,
  // which no socket and no proxy writes.
  if (parsed.kind() === 'ipv4' && !ipaddr.IPv4.isValidFourPartDecimal(a) && !a.includes(':')) return undefined;
  return parsed;
}

const family = (a: string) => (isIP(a) === 6 ? 'ipv6' : 'ipv4');
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

/** `RELAY_TRUST_PROXY`: a hop count (`1`), or a comma-separated list of proxy addresses and CIDR ranges. */
export function parseTrustProxy(value: string): TrustProxy {
  if (/^\d+$/.test(value.trim())) return { hops: Number(value) };
  const proxies = new BlockList();
  for (const entry of value
    .split(',')
    .map((a) => a.trim())
    .filter(Boolean)) {
    const [address = '', prefix, ...rest] = entry.split('/');
    const ip = normalize(address);
    const bits = isIP(ip) === 6 ? 128 : 32;
    if (!isIP(ip) || rest.length || (prefix !== undefined && !(/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits))) {
      throw new Error(`RELAY_TRUST_PROXY: ${entry} is neither a hop count nor an IP address or CIDR range`);
    }
    if (prefix === undefined) proxies.addAddress(ip, family(ip));
    else proxies.addSubnet(ip, Number(prefix), family(ip));
  }
  return { proxies };
}

/**
 * The client's address: the socket's, or, when that socket is a trusted proxy, the address the
 * proxies say they forwarded for (see TrustProxy).
 */
export function clientAddress(socketAddress: string, forwardedFor: string | undefined, trust: TrustProxy | undefined): string {
  const socket = normalize(socketAddress);
  if (!trust || !forwardedFor) return socket;
  const hops = forwardedFor
    .split(',')
    .map((a) => normalize(a.trim()))
    .filter((a) => isIP(a));
  if ('hops' in trust) return trust.hops > 0 && holds(PRIVATE, socket) ? (hops[Math.max(0, hops.length - trust.hops)] ?? socket) : socket;
  let address = socket;
  while (holds(trust.proxies, address) && hops.length) address = hops.pop()!;
  return address;
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
