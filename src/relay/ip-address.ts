import { BlockList, isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

// An IP address's grammar, for the settings that name addresses (RELAY_TRUST_PROXY) and the HTTP
// side that reads callers' addresses (http/client-address.ts): one spelling per address.

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
export const normalize = (a: string): string => {
  const parsed = parse(a);
  return parsed ? parsed.toString() : a;
};

export function parse(a: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  if (!ipaddr.isValid(a)) return undefined;
  const parsed = ipaddr.process(a);
  // Only the four-part decimal form for IPv4: ipaddr also reads `1`, `0x7f.1` or `010.0.0.1`,
  // which no socket and no proxy writes.
  if (parsed.kind() === 'ipv4' && !ipaddr.IPv4.isValidFourPartDecimal(a) && !a.includes(':')) return undefined;
  return parsed;
}

/**
 * An X-Forwarded-For entry's address, in one spelling: written as a socket's (`203.0.113.7`,
 * `2001:db8::1`) or with the port some proxies add (`203.0.113.7:4711`, `[2001:db8::1]:4711`,
 * `[2001:db8::1]`; Azure's among them). Undefined: not an address.
 */
export function forwardedAddress(entry: string): string | undefined {
  const withPort = /^\[([^\]]*)\](?::(\d{1,5}))?$/.exec(entry) ?? /^([\d.]+):(\d{1,5})$/.exec(entry);
  if (!withPort) return parse(entry)?.toString();
  const [, address = '', port] = withPort;
  // Brackets hold IPv6 only; a port is 0 to 65535.
  if ((entry.startsWith('[') && isIP(address) !== 6) || (port !== undefined && Number(port) > 65_535)) return undefined;
  return parse(address)?.toString();
}

export const family = (a: string) => (isIP(a) === 6 ? 'ipv6' : 'ipv4');

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
