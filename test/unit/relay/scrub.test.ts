import { describe, expect, it } from 'vitest';
import { scrub } from '../../../src/relay/scrub.js';

describe('scrub', () => {
  it('takes out a known secret anywhere, and values shaped like credentials', () => {
    expect(scrub('the key live_abcdefghijkl was refused', ['live_abcdefghijkl'])).toBe('the key [redacted] was refused');
    expect(scrub('{"apiKey":"sk_live_0123456789abcdef"}')).toBe('{"apiKey":"[redacted]"}');
    expect(scrub('Authorization: Bearer rb1.eyJ1c2VySWQiOiJ4In0.sig')).toBe('Authorization: Bearer [redacted]');
    expect(scrub('api_key=0123456789abcdefXYZ&x=1')).toBe('api_key=[redacted]&x=1');
  });

  it('leaves prose alone', () => {
    expect(scrub('NO PAYMENTS_API_KEY: paying through the embedded sandbox')).toBe('NO PAYMENTS_API_KEY: paying through the embedded sandbox');
    expect(scrub('token: expired')).toBe('token: expired');
  });
});
