// Issue 34, finding 8: docs/deploy.md §1's /etc/rewardbus/relay.env, read as systemd reads an
// EnvironmentFile= (not as a shell would), must start a relay that reaches ready. With inline
// comments (`RELAY_PUBLIC_URL=https://… # where…`) the comment was part of the value: exit 1.

import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { afterAll, describe, expect, it } from 'vitest';
import { createSandbox } from '../../src/sandbox/index.js';
import { stop } from '../helpers/processes.js';
import { startRelayCommand } from '../helpers/relay-command.js';

const cleanup: Array<() => unknown> = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

/**
 * An EnvironmentFile= as systemd parses it (systemd.exec(5), "EnvironmentFile="): `KEY=VALUE`
 * lines; a line starting with `#` or `;` (after blanks) is a comment, and so is nothing else; a
 * line without `=` is ignored; blanks around the key and the value are dropped. A value is taken
 * as written, `#` and all, save: backslash escapes the next character (backslash-newline joins
 * lines); in single quotes everything up to the next quote is verbatim (across lines too); in
 * double quotes `\"`, `\\`, `` \` `` and `\$` are escapes and backslash-newline joins lines.
 */
function parseEnvironmentFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  let i = 0;
  const blank = (c: string | undefined) => c === ' ' || c === '\t' || c === '\r';
  while (i < text.length) {
    while (blank(text[i]) || text[i] === '\n') i++;
    if (i >= text.length) break;
    if (text[i] === '#' || text[i] === ';') {
      while (i < text.length && text[i] !== '\n') i++;
      continue;
    }
    let key = '';
    while (i < text.length && text[i] !== '=' && text[i] !== '\n') key += text[i++];
    if (text[i] !== '=') continue; // no `=`: ignored
    i++;
    while (blank(text[i])) i++;
    let value = '';
    let quoted = false;
    if (text[i] === "'") {
      quoted = true;
      const end = text.indexOf("'", i + 1);
      value = text.slice(i + 1, end < 0 ? text.length : end);
      i = end < 0 ? text.length : end + 1;
    } else if (text[i] === '"') {
      quoted = true;
      for (i++; i < text.length && text[i] !== '"'; i++) {
        if (text[i] === '\\' && text[i + 1] === '\n') i++;
        else if (text[i] === '\\' && '"\\`$'.includes(text[i + 1] ?? '')) value += text[++i];
        else value += text[i];
      }
      i++;
    } else {
      for (; i < text.length && text[i] !== '\n'; i++) {
        if (text[i] === '\\' && text[i + 1] === '\n') i++;
        else if (text[i] === '\\' && i + 1 < text.length) value += text[++i];
        else value += text[i];
      }
    }
    // What follows a closing quote on its line is dropped (systemd warns of it).
    if (quoted) while (i < text.length && text[i] !== '\n') i++;
    env[key.trim()] = quoted ? value : value.replace(/[ \t\r]+$/, '');
  }
  return env;
}

/** The relay.env block of docs/deploy.md §1: the code block after "`/etc/rewardbus/relay.env` holds". */
function documentedEnvFile(): string {
  const doc = readFileSync('docs/deploy.md', 'utf8');
  const from = doc.indexOf('`/etc/rewardbus/relay.env` holds');
  expect(from, 'docs/deploy.md §1 describes /etc/rewardbus/relay.env').toBeGreaterThan(0);
  const block = /```sh\n([\s\S]*?)```/.exec(doc.slice(from));
  expect(block, 'a code block follows it').not.toBeNull();
  return block![1]!;
}

describe("systemd's EnvironmentFile= rules, as the test reads them", () => {
  it('keeps an inline comment in the value; takes quotes, escapes and comment lines as systemd does', () => {
    expect(parseEnvironmentFile('A=1   # one\n# B=2\n ; C=3\nD = spaced out \nE="x \\"y\\" # z"\nF=\'a\\b\'\nG=a\\\nb\nnot a line\n')).toEqual({
      A: '1   # one',
      D: 'spaced out',
      E: 'x "y" # z',
      F: 'a\\b',
      G: 'ab',
    });
  });
});

describe('the relay.env of docs/deploy.md §1 (finding 8)', () => {
  it('finding 8: parsed with systemd rules, every value is clean and a relay started with it reaches ready', async () => {
    const file = parseEnvironmentFile(documentedEnvFile());
    expect(Object.keys(file)).toEqual(
      expect.arrayContaining(['PAYMENTS_API_KEY', 'PAYMENTS_BASE_URL', 'RELAY_PUBLIC_URL', 'WEBHOOK_SECRET', 'RELAY_TRUST_PROXY', 'RELAY_ADMIN_TOKEN']),
    );
    for (const [key, value] of Object.entries(file)) expect(value, `${key} as systemd reads it`).not.toMatch(/\s#|^#/);

    // The placeholders (…) get this test's secrets; the service is the sandbox, not the real one.
    const key = `envfile_${randomUUID()}`;
    const sandbox = createSandbox({ apiKey: key });
    const service = serve({ fetch: sandbox.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise((r) => service.once('listening', r));
    cleanup.push(() => service.close());
    const secrets: Record<string, string> = {
      PAYMENTS_API_KEY: key,
      WEBHOOK_SECRET: randomUUID() + randomUUID(),
      RELAY_ADMIN_TOKEN: randomUUID() + randomUUID(),
      RELAY_SECRET: randomUUID() + randomUUID(),
    };
    const env = Object.fromEntries(Object.entries(file).map(([k, v]) => [k, v === '…' ? secrets[k]! : v]));
    expect(Object.values(env)).not.toContain(undefined);
    const dir = mkdtempSync(join(tmpdir(), 'rewardbus-envfile-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    // The unit's own Environment= defaults, then the file over them (here: loopback, a port of its own).
    const { child, url } = await startRelayCommand({
      HOST: '127.0.0.1',
      RELAY_DATA_DIR: dir,
      NODE_ENV: 'production',
      ...env,
      PORT: '0',
      PAYMENTS_BASE_URL: `http://127.0.0.1:${(service.address() as AddressInfo).port}`,
    });
    cleanup.push(() => stop(child));
    await expect.poll(async () => (await fetch(`${url}/v1/ready`)).status, { timeout: 15_000 }).toBe(200);
  });
});
