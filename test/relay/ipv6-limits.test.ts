// Finding 1 of issue 34: every per-address limit counts an IPv6 client by its /64, however its
// address is spelled. Each test is a client of one /64 taking a new address for every request
// (as any IPv6 host can), through a trusted proxy on loopback (X-Forwarded-For).
import { afterEach, describe, expect, it } from 'vitest';
import { addressKey } from '../../src/relay/http/client-address.js';
import { heldStreams } from '../helpers/held-streams.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';

let relay: TestRelay | undefined;
const streams = heldStreams();
afterEach(async () => {
  streams.closeAll();
  await relay?.stop();
  relay = undefined;
});

const hex = (n: number) => (n & 0xffff).toString(16);
/** The n-th address of 2001:db8:1:2::/64, in one of the spellings a proxy or an attacker may write. */
function inOneSlash64(n: number): string {
  const [a, b, c, d] = [n * 7919 + 1, n * 104729 + 3, n * 31 + 5, n + 1].map(hex);
  switch (n % 4) {
    case 0:
      return `2001:db8:1:2:${a}:${b}:${c}:${d}`;
    case 1:
      return `2001:0DB8:0001:0002:${a!.toUpperCase().padStart(4, '0')}:${b}:${c}:${d}`;
    case 2:
      // An embedded IPv4 tail: the last two groups written as four decimal bytes.
      return `2001:db8:1:2:${a}:${b}:${n & 0xff}.${(n * 3) & 0xff}.1.${(n * 5) & 0xff}`;
    default:
      return `2001:db8:1:2::${d}`;
  }
}

/** Six addresses of 2001:db8:0:a::/64, half with an embedded IPv4 tail after `::` (the spelling). */
const TAILS = ['2001:db8::a:1:0:1.2.3.4', '2001:db8:0:a::9', '2001:db8::a:2:0:5.6.7.8', '2001:DB8:0:A:0:0:0:7', '2001:db8::a:3:0:9.9.9.9', '2001:db8:0:a:ffff::'];

const TRUSTED = { RELAY_TRUST_PROXY: '127.0.0.1' };
const from = (address: string) => ({ 'x-forwarded-for': address });
const statuses = (list: number[]) => {
  const counts: Record<number, number> = {};
  for (const s of list) counts[s] = (counts[s] ?? 0) + 1;
  return counts;
};

describe('IPv6 clients are counted by their /64 in every per-address limit', () => {
  it('IPv6: every spelling of an address gives one key; an embedded IPv4 tail lands in its true /64', () => {
    expect(addressKey('203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('::FFFF:cb00:7107')).toBe('203.0.113.7');
    expect(addressKey('64:ff9b::203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('2001:db8:1:2::a')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:0DB8:0001:0002:ffff:0:0:1')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8::1')).toBe('2001:db8::/64');
    // 2001:db8:0:a:X:0:102:304: the IPv4 tail is two groups, so X is the fifth, not the fourth.
    for (const x of ['1', '2', 'ffff']) expect(addressKey(`2001:db8::a:${x}:0:1.2.3.4`)).toBe('2001:db8:0:a::/64');
    expect(addressKey('2001:db8:0:a::1')).toBe('2001:db8:0:a::/64');
    expect(addressKey('fe80::1%eth0')).toBe('fe80::/64');
    for (const n of [0, 1, 2, 3, 17, 200]) expect(addressKey(inOneSlash64(n))).toBe('2001:db8:1:2::/64');
    for (const none of [undefined, '', 'local', 'unknown', '1', '0x7f.1', '2001:db8::g']) expect(addressKey(none)).toBeUndefined();
  });

  it('IPv6: 40 wrong admin tokens from one /64 get 10 × 401 then 429', async () => {
    relay = await startTestRelay({ ...TRUSTED, RELAY_ADMIN_TOKEN: 'the-operator-token-of-32-characters-or-more', RELAY_ADMIN_FAILURES_PER_MINUTE: '10' });
    const answers = [];
    for (let i = 0; i < 40; i++) answers.push((await fetch(`${relay.url}/metrics`, { headers: { authorization: `Bearer guess-${i}`, ...from(inOneSlash64(i)) } })).status);
    expect(answers.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses(answers.slice(10))).toEqual({ 429: 30 });
    // Another /64 is another client.
    expect((await fetch(`${relay.url}/metrics`, { headers: { authorization: 'Bearer guess', ...from('2001:db8:1:3::1') } })).status).toBe(401);
  });

  it('IPv6: 30 links from one /64 under a 10/min rate limit get 10 × 201 then 429', async () => {
    relay = await startTestRelay({ ...TRUSTED, RELAY_RATE_LIMIT_PER_MINUTE: '10' });
    const answers = [];
    for (let i = 0; i < 30; i++) {
      const r = await fetch(`${relay.url}/v1/players`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...from(inOneSlash64(i)) },
        body: JSON.stringify({ gamertag: `v6-${i}` }),
      });
      answers.push(r.status);
    }
    expect(answers.slice(0, 10)).toEqual(Array(10).fill(201));
    expect(statuses(answers.slice(10))).toEqual({ 429: 20 });
  });

  it('IPv6: 10 streams from one /64 under a per-address cap of 5 get 5 × 200 then 429', async () => {
    relay = await startTestRelay({ ...TRUSTED, RELAY_STREAMS_PER_ADDRESS: '5' });
    const players = [];
    for (let i = 0; i < 10; i++) players.push(await relay.link(`v6-streamer-${i}`));
    const answers = [];
    for (const [i, p] of players.entries()) {
      const { response: r } = await streams.open(`${relay.url}/v1/events`, { headers: { authorization: `Bearer ${p.token}`, ...from(inOneSlash64(i)) } });
      if (r.status !== 200) await r.body?.cancel();
      answers.push(r.status);
    }
    expect(answers).toEqual([...Array(5).fill(200), ...Array(5).fill(429)]);
  });

  it('IPv6: 25 webhook deliveries from one /64 under 10/min get 10 answers then 429', async () => {
    relay = await startTestRelay({ ...TRUSTED, RELAY_WEBHOOK_RATE_LIMIT_PER_MINUTE: '10' });
    const answers = [];
    for (let i = 0; i < 25; i++) {
      const r = await fetch(`${relay.url}/v1/webhooks/payments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...from(inOneSlash64(i)) },
        body: `{"id":"evt-${i}"}`,
      });
      answers.push(r.status);
    }
    // Unsigned deliveries: 401 while the address may deliver, then 429 before the body is read.
    expect(answers.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses(answers.slice(10))).toEqual({ 429: 15 });
  });

  it('IPv6: links per address count an address with an embedded IPv4 tail in its true /64 (2 allowed, 2 linked)', async () => {
    relay = await startTestRelay({ ...TRUSTED, RELAY_LINKS_PER_ADDRESS_PER_DAY: '2' });
    const answers = [];
    for (const [i, address] of TAILS.entries()) {
      const r = await fetch(`${relay.url}/v1/players`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...from(address) },
        body: JSON.stringify({ gamertag: `tail-${i}` }),
      });
      answers.push(r.status);
    }
    expect(answers).toEqual([201, 201, 429, 429, 429, 429]);
  });

  it('IPv6: the address cap counts an embedded IPv4 tail in its true /64: 2 claims of 21 sats under a cap of 50 from 6 addresses', async () => {
    relay = await startTestRelay({ ...TRUSTED, RELAY_ADDRESS_DAILY_CAP_SATS: '50' });
    for (const [i, address] of TAILS.entries()) {
      const player = await relay.link(`capped-${i}`);
      const r = await fetch(`${relay.url}/v1/rewards`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${player.token}`, 'idempotency-key': crypto.randomUUID(), ...from(address) },
        body: JSON.stringify({ achievementId: 'first-coin' }),
      });
      await r.body?.cancel();
    }
    expect(relay.sandbox!.payments().map((p) => Number(p.amount) / 1000)).toEqual([21, 21]);
  });
});
