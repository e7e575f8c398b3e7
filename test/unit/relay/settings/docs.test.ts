import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configurationDoc, settingsHelp } from '../../../../src/relay/settings/docs.js';
import { SANDBOX_SETTINGS, SETTINGS } from '../../../../src/relay/settings/schema.js';

// The settings are stated once, in src/relay/settings/schema.ts: what documents them must say the same.

describe('docs/configuration.md', () => {
  it('is what the schema writes (edit src/relay/settings/schema.ts, then run `npm run docs:settings`)', () => {
    const written = readFileSync('docs/configuration.md', 'utf8');
    expect(written, 'docs/configuration.md differs from the schema: run `npm run docs:settings` and commit the result').toBe(configurationDoc());
  });

  it('has one row per setting, with its default', () => {
    const doc = configurationDoc();
    for (const [name, s] of Object.entries({ ...SETTINGS, ...SANDBOX_SETTINGS })) {
      const row = doc.split('\n').find((l) => l.startsWith(`| \`${name}\` |`));
      expect(row, name).toBeDefined();
      if ('defaultText' in s) expect(row, name).toContain(`| ${s.defaultText} |`);
      else if ('default' in s) expect(row, name).toContain(`| \`${s.default}\``);
      else expect(row, name).toContain('| absent |');
    }
    expect(doc).toContain('| `RELAY_USER_DAILY_CAP_SATS` | `1000` |');
    expect(doc).toContain('| `RELAY_ADDRESS_DAILY_CAP_SATS` | `0` (off) |');
  });
});

describe('.env.example', () => {
  it("names every setting of the schema, in the schema's order (the order errors are reported in)", () => {
    const names = [...readFileSync('.env.example', 'utf8').matchAll(/^([A-Z_]+)=/gm)].map((m) => m[1]);
    expect(names).toEqual(Object.keys(SETTINGS));
  });

  it('gives each setting that has a default its default, as the schema writes it', () => {
    const values = Object.fromEntries([...readFileSync('.env.example', 'utf8').matchAll(/^([A-Z_]+)=(.*)$/gm)].map((m) => [m[1], m[2]]));
    for (const [name, s] of Object.entries(SETTINGS)) {
      // A default the docs say in words (computed, or none) is left empty in the example.
      const expected = 'default' in s && !('defaultText' in s) ? s.default : '';
      expect(values[name], name).toBe(expected);
    }
  });
});

describe('--help', () => {
  it('lists every setting once, with its default when that is one value', () => {
    const help = settingsHelp();
    for (const [name, s] of Object.entries(SETTINGS)) {
      const lines = help.split('\n').filter((l) => l.trim().split(/\s+/)[0] === name);
      expect(lines, name).toHaveLength(1);
      if ('default' in s && !('defaultText' in s)) expect(lines[0], name).toContain(`(default ${s.default})`);
    }
  });
});
