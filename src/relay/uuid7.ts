import { randomFillSync } from 'node:crypto';

const bytes = new Uint8Array(16);

/**
 * A UUIDv7 (RFC 9562): the first 48 bits are the time in ms, so ids made one after another sort
 * together and the ledger's id index grows at its end instead of taking writes all over.
 */
export function uuid7(now = Date.now()): string {
  randomFillSync(bytes, 6, 10);
  let t = now;
  for (let i = 5; i >= 0; i--) {
    bytes[i] = t & 0xff;
    t = Math.floor(t / 256);
  }
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const h = Buffer.from(bytes).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
