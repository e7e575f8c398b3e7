import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { VERSION } from '../../../src/relay/index.js';

type Manifest = { version: string; dependencies?: Record<string, string>; devDependencies?: Record<string, string> };
const read = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Manifest;
const client = read('package.json');
const relay = read('packages/relay/package.json');

describe('the two packages', () => {
  it('a game installs the client with eventemitter3 alone: no server, no native module', () => {
    expect(Object.keys(client.dependencies ?? {})).toEqual(['eventemitter3']);
  });

  it("the relay's package depends on what this repository develops it with, at the same ranges", () => {
    // What the relay runs on: an empty list would make the check below say nothing.
    expect(Object.keys(relay.dependencies ?? {})).toEqual(expect.arrayContaining(['hono', '@hono/node-server', 'better-sqlite3', 'pg', 'pino', 'zod', 'ipaddr.js']));
    for (const [name, range] of Object.entries(relay.dependencies ?? {})) expect([name, client.devDependencies?.[name]]).toEqual([name, range]);
  });

  it('the relay reports its package version', () => {
    expect(VERSION).toBe(relay.version);
  });
});
