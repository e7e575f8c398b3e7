import { afterEach, describe, expect, it } from 'vitest';
import { addressKey, clientAddress, parseTrustProxy } from '../../src/relay/http/client-address.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';

let relay: TestRelay | undefined;
afterEach(async () => {
  await relay?.stop();
  relay = undefined;
});

describe('RELAY_TRUST_PROXY as a hop count', () => {
  it('believes X-Forwarded-For only from a socket on loopback or a private network, never from a client reaching the relay directly', () => {
    const trust = parseTrustProxy('1');
    for (const proxy of ['127.0.0.1', '::1', '10.1.2.3', '172.20.0.5', '192.168.1.9', '::ffff:10.0.0.2', 'fd00::5'])
      expect([proxy, clientAddress(proxy, '6.6.6.6, 203.0.113.7', trust)]).toEqual([proxy, '203.0.113.7']);
    for (const direct of ['203.0.113.9', '8.8.8.8', '2001:db8::1', '::ffff:203.0.113.9'])
      expect([direct, clientAddress(direct, '1.1.1.1', trust)]).toEqual([direct, direct.replace('::ffff:', '')]);
  });
});

describe('RELAY_TRUST_PROXY as addresses', () => {
  it('takes single addresses and CIDR ranges, IPv4 and IPv6, and refuses anything else at start', () => {
    const trust = parseTrustProxy('10.0.0.0/8, 192.168.1.7,fd00::/8');
    expect(clientAddress('10.9.9.9', '203.0.113.7', trust)).toBe('203.0.113.7');
    // Read from the right through every trusted proxy, stopping at the first address that is not one.
    expect(clientAddress('192.168.1.7', '6.6.6.6, 203.0.113.7, 10.0.0.4', trust)).toBe('203.0.113.7');
    expect(clientAddress('fd00::1', '203.0.113.7', trust)).toBe('203.0.113.7');
    expect(clientAddress('192.168.1.8', '203.0.113.7', trust)).toBe('192.168.1.8');
    expect(clientAddress('203.0.113.9', '1.1.1.1', trust)).toBe('203.0.113.9');
    for (const bad of ['10.0.0.0/33', 'proxy.internal', '1.2.3.4/x', '::1/129']) expect(() => parseTrustProxy(bad)).toThrow(/RELAY_TRUST_PROXY/);
  });

  const ask = () => (xff: string) =>
    fetch(`${relay!.url}/v1/players`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': xff }, body: '{"gamertag":"nobody"}' }).then(
      (r) => r.status,
    );

  it('with a CIDR that holds the proxy (127.0.0.0/8), limits each client behind it on its own', async () => {
    relay = await startTestRelay({ RELAY_RATE_LIMIT_PER_MINUTE: '2', RELAY_TRUST_PROXY: '127.0.0.0/8' });
    const send = ask();
    for (const p of ['10.0.0.1', '10.0.0.2', '10.0.0.3']) expect([await send(p), await send(p)]).toEqual([404, 404]);
    expect(await send('10.0.0.1')).toBe(429);
  });

  it("with a CIDR that does not hold the socket's address, ignores X-Forwarded-For: rotating it does not escape the limit", async () => {
    relay = await startTestRelay({ RELAY_RATE_LIMIT_PER_MINUTE: '2', RELAY_TRUST_PROXY: '10.0.0.0/8' });
    const send = ask();
    expect([await send('1.1.1.1'), await send('2.2.2.2'), await send('3.3.3.3')]).toEqual([404, 404, 429]);
  });
});

describe('addresses as limits count them', () => {
  it('an IPv4 address as it is; an IPv6 one by its /64, however it is spelled (see ipv6-limits.test.ts)', () => {
    expect(addressKey('203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('2001:db8:1:2::a')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:0DB8:0001:0002:ffff:0:0:1')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8::1')).toBe('2001:db8::/64');
    expect(addressKey('::1')).toBe('::/64');
    expect(addressKey('local')).toBeUndefined();
  });
});
