// Looked up once: in Node, `crypto` is a getter on the global object, a cost unlock() would pay each time.
const c = globalThis.crypto;

/**
 * A random UUID (version 4). `crypto.randomUUID` exists only in secure contexts (https,
 * localhost), and a phone testing the game over plain http on the LAN is not one: there the id
 * comes from `crypto.getRandomValues`, which exists everywhere and is just as unguessable.
 */
export function randomId(): string {
  return typeof c.randomUUID === 'function' ? c.randomUUID() : fromRandomValues();
}

function fromRandomValues(): string {
  const b = c.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  let hex = '';
  for (let i = 0; i < 16; i++) hex += (b[i]! + 0x100).toString(16).slice(1);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
