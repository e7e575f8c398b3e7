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

// Some proxies (Azure's among them) write each X-Forwarded-For entry with its port: `ip:port`,
// `[ipv6]:port`. The client is that address, whatever its port; an entry that is no address at
// all where the client's should be is refused, never skipped (skipping it made the entry to its
// left, which the client writes itself, the address believed).
describe('X-Forwarded-For entries written with a port', () => {
  const ask = (xff: string) =>
    fetch(`${relay!.url}/v1/players`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': xff }, body: '{"gamertag":"nobody"}' });
  const status = (xff: string) => ask(xff).then((r) => r.status);

  for (const trust of ['1', '127.0.0.0/8']) {
    it(`counts each client by its address, port or none (RELAY_TRUST_PROXY=${trust})`, async () => {
      relay = await startTestRelay({ RELAY_RATE_LIMIT_PER_MINUTE: '2', RELAY_TRUST_PROXY: trust });
      // Two clients behind the proxy, each with its own bucket: not the proxy's one for all.
      expect([await status('203.0.113.7:4711'), await status('203.0.113.7:4712')]).toEqual([404, 404]);
      expect([await status('203.0.113.8:4711'), await status('[2001:db8::1]:4711'), await status('[2001:db8::2]')]).toEqual([404, 404, 404]);
      // The same clients again, however their address is written (IPv6 by its /64): the third of each is limited.
      expect([await status('203.0.113.7'), await status('[2001:db8::3]:80'), await status('[2001:db8:0:1::4]:80')]).toEqual([429, 429, 404]);
    });

    it(`does not believe the entry the client wrote left of the proxy's ip:port (RELAY_TRUST_PROXY=${trust})`, async () => {
      relay = await startTestRelay({ RELAY_RATE_LIMIT_PER_MINUTE: '2', RELAY_TRUST_PROXY: trust });
      expect([await status('1.1.1.1, 203.0.113.7:4711'), await status('2.2.2.2, 203.0.113.7:4711'), await status('3.3.3.3, 203.0.113.7:4711')]).toEqual([404, 404, 429]);
    });

    it(`refuses an entry that is no address where the client's should be, as a 400 that says so (RELAY_TRUST_PROXY=${trust})`, async () => {
      relay = await startTestRelay({ RELAY_RATE_LIMIT_PER_MINUTE: '2', RELAY_TRUST_PROXY: trust });
      for (const bad of ['203.0.113.7:99999', 'proxy.internal', '203.0.113.7:', '[203.0.113.7]:80', '2001:db8::1:4711x', '1.1.1.1, unknown']) {
        const r = await ask(bad);
        expect([bad, r.status, r.headers.get('content-type')]).toEqual([bad, 400, 'application/problem+json']);
        expect(((await r.json()) as { detail: string }).detail).toMatch(/X-Forwarded-For/);
      }
      // Garbage the client wrote left of the proxy's entry is never read.
      expect(await status('not-an-address, 203.0.113.9:1')).toBe(404);
    });
  }
});
