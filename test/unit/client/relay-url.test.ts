import { afterEach, describe, expect, it, vi } from 'vitest';
import { createRewardBus, memoryStorage } from '../../../src/client/node.js';

const made = (relayUrl: string) => () => createRewardBus({ relayUrl, storage: memoryStorage(), eventSource: false }).destroy();

afterEach(() => vi.unstubAllGlobals());

describe('relayUrl', () => {
  // Each was taken before and showed only as a relay never reached (offline for good, or a page of the game's own host).
  it.each(['localhost:8787', '127.0.0.1:8787', 'rewards.example.com', 'ws://rewards.example.com', '', '/rewards'])(
    'is refused where the bus is made in Node when it is no http:// or https:// address: %j',
    (url) => {
      expect(made(url)).toThrow(new TypeError(`relayUrl ${JSON.stringify(url)} needs http:// or https://, e.g. http://localhost:8787`));
    },
  );

  it.each(['http://127.0.0.1:8787', 'https://rewards.example.com/', 'HTTPS://rewards.example.com/game-a'])('is taken whole: %s', (url) => {
    expect(made(url)).not.toThrow();
  });

  it('may be a path on the page’s own host in a page, and nothing else without a scheme', () => {
    vi.stubGlobal('location', new URL('https://game.example.com/play/'));
    expect(made('/rewards')).not.toThrow();
    expect(made('localhost:8787')).toThrow(/needs http:\/\/ or https:\/\/ \(or a path: \/…\)/);
  });
});
