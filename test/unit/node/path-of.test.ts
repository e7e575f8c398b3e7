import { describe, expect, it } from 'vitest';
import { pathOf } from '../../../src/node/start-server.js';

// The Node shell decides sandbox or relay by the path: read off plain URLs, it must be the path
// URL's parser gives, or a request could reach the sandbox by another spelling.
describe('pathOf', () => {
  it.each([
    'http://127.0.0.1:8787/v1/rewards',
    'http://127.0.0.1:8787/v1/rewards?limit=5',
    'http://relay.example.com/sandbox/v0/wallet#x',
    'http://[::1]:8787/v1/events',
    'http://h',
    'http://h/v1/../sandbox/_sandbox/users',
    'http://h/v1/%2e%2e/sandbox/_sandbox/users',
    'http://h/v1/.%2E/sandbox',
    'http://h/sandbox/..%2Fv1',
    'http://h//sandbox',
    'http://h/\\sandbox',
    'http://h\\x/sandbox',
    'http://h/a b',
    'https://h:443/Sandbox/x',
  ])('%s is the path new URL() gives', (url) => {
    expect(pathOf(url)).toBe(new URL(url).pathname);
  });
});
