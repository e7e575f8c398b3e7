import { randomFillSync } from 'node:crypto';

// Random bytes are drawn 4 KB at a time, as crypto.randomUUID does: one call per id cost more
// than the rest of making it.
const pool = Buffer.alloc(4096);
let used = pool.length;
const bytes = Buffer.alloc(16);

/**
 * A UUIDv7 (RFC 9562): the first 48 bits are the time in ms, so ids made one after another sort
 * together and the ledger's id index grows at its end instead of taking writes all over.
 */
export function uuid7(now = Date.now()): string {
  if (used + 10 > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  pool.copy(bytes, 6, used, used + 10);
  used += 10;
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const h = bytes.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
