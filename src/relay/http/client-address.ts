import { BlockList, isIP } from 'node:net';

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

/** IPv4 clients of a dual-stack socket show as ::ffff:1.2.3.4. */
const normalize = (a: string) => a.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');

const family = (a: string) => (isIP(a) === 6 ? 'ipv6' : 'ipv4');
const holds = (list: BlockList, address: string) => isIP(address) !== 0 && list.check(address, family(address));

/** Loopback and private networks: where a proxy the operator runs would connect from. */
const PRIVATE = new BlockList();
for (const [net, prefix] of [['127.0.0.0', 8], ['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16], ['100.64.0.0', 10], ['169.254.0.0', 16]] as const) PRIVATE.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [['::1', 128], ['fc00::', 7], ['fe80::', 10]] as const) PRIVATE.addSubnet(net, prefix, 'ipv6');

/** `RELAY_TRUST_PROXY`: a hop count (`1`), or a comma-separated list of proxy addresses and CIDR ranges. */
export function parseTrustProxy(value: string): TrustProxy {
  if (/^\d+$/.test(value.trim())) return { hops: Number(value) };
  const proxies = new BlockList();
  for (const entry of value.split(',').map((a) => a.trim()).filter(Boolean)) {
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
  const hops = forwardedFor.split(',').map((a) => normalize(a.trim())).filter((a) => isIP(a));
  if ('hops' in trust) return trust.hops > 0 && holds(PRIVATE, socket) ? (hops[Math.max(0, hops.length - trust.hops)] ?? socket) : socket;
  let address = socket;
  while (holds(trust.proxies, address) && hops.length) address = hops.pop()!;
  return address;
}

/**
 * The address as limits count it: an IPv4 address as it is, an IPv6 one by its /64 (what one
 * home or one server is usually given), written `2001:db8:1:2::/64`.
 */
export function addressGroup(address: string): string {
  const a = normalize(address);
  if (isIP(a) !== 6) return a;
  const [head = '', tail = ''] = a.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  // An embedded IPv4 tail (::ffff:1.2.3.4 is handled above) takes two groups.
  const groups = a.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups.slice(0, 4).map((g) => Number.parseInt(g || '0', 16).toString(16)).join(':')}::/64`;
}
