import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/relay/index.js';

describe('the relay logger', () => {
  const lines = (secrets: string[] = []) => {
    const out: string[] = [];
    return { out, log: createLogger('info', { write: (l: string) => void out.push(l) }, secrets) };
  };

  it('never writes a named credential field, nor a credential nested anywhere else, nor the API key', () => {
    const { out, log } = lines(['live_key_0123456789']);
    log.info({ token: 'short', authorization: 'Bearer x', headers: { apikey: 'abc' } }, 'named');
    log.info({ err: { response: { config: { apiKey: 'sk_live_0123456789abcdef' } } } }, 'nested');
    log.warn({ message: 'the service said: key live_key_0123456789 refused' }, 'quoted');
    const text = out.join('');
    for (const secret of ['short', 'Bearer x', '"abc"', 'sk_live_0123456789abcdef', 'live_key_0123456789']) expect(text).not.toContain(secret);
    expect(out).toHaveLength(3);
    expect(text.match(/\[redacted\]/g)?.length).toBe(5);
  });
});
