// Issue 34, findings 9 and 12: the install commands of docs/deploy.md and of the README, read as
// facts. The relay's package is not on the registry yet, so §1 installs the tarball `npm pack`
// writes; §5 restarts the units §2 makes; the README's install builds once.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { RELAY_PACKAGE_FILES } from '../../esbuild.config.mjs';

const exec = promisify(execFile);
const DEPLOY = readFileSync('docs/deploy.md', 'utf8');
const UNIT = readFileSync('docs/deploy/rewardbus-relay.service', 'utf8');
const README = readFileSync('README.md', 'utf8');

/** The text of a `## ` section whose heading starts with `heading`, up to the next `## `. */
function section(doc: string, heading: string): string {
  const from = doc.indexOf(`\n## ${heading}`);
  if (from < 0) throw new Error(`no section "${heading}"`);
  const next = doc.indexOf('\n## ', from + 1);
  return doc.slice(from, next < 0 ? undefined : next);
}

/** The commands of a section's ```sh blocks, one a line (comments dropped, continuations joined). */
function commands(text: string): string[] {
  return [...text.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) =>
    m[1]!
      .replace(/\\\n\s*/g, ' ')
      .split('\n')
      .map((l) => l.replace(/\s+#.*$/, '').trim())
      .filter((l) => l && !l.startsWith('#')),
  );
}

/** The file `npm pack` writes for a package (asked of npm itself, without building). */
async function tarballName(dir: string): Promise<string> {
  const { stdout } = await exec('npm', ['pack', '--dry-run', '--json', '--ignore-scripts', dir]);
  return (JSON.parse(stdout) as Array<{ filename: string }>)[0]!.filename;
}

describe('docs/deploy.md: the install and the unit names (finding 9)', () => {
  it('finding 9: §1 installs the tarball npm pack writes, not the unpublished package; §5 restarts the rewardbus-relay@PORT units of §2', async () => {
    const install = commands(section(DEPLOY, '1. Install'));
    // `npm install @rewardbus/relay` answers 404 until the package is published.
    for (const text of [install.join('\n'), UNIT]) expect(text).not.toMatch(/npm[^\n]* install[^\n]* @rewardbus\/relay\b/);
    const tarball = await tarballName('./packages/relay');
    const pack = install.findIndex((c) => /\bnpm pack\b[^\n]*\.\/packages\/relay/.test(c));
    const installed = install.findIndex((c) => /npm --prefix \/opt\/rewardbus install /.test(c) && c.includes(tarball));
    expect(pack, `§1 packs ./packages/relay: ${install.join(' | ')}`).toBeGreaterThanOrEqual(0);
    expect(installed, `§1 installs ${tarball}`).toBeGreaterThan(pack);
    // npm --prefix resolves a relative path from the prefix, not from where it runs.
    expect(install[installed]).toMatch(new RegExp(`install "?(\\$PWD|/)[^ ]*${tarball.replace(/\./g, '\\.')}`));
    expect(UNIT).toContain(tarball);

    // §2's two relays on one machine are rewardbus-relay@8787 and @8788; §5 restarts those.
    const units = [...section(DEPLOY, '2. The systemd unit').matchAll(/rewardbus-relay@(\d+)/g)].map((m) => m[1]);
    expect(new Set(units)).toEqual(new Set(['8787', '8788']));
    const five = section(DEPLOY, '5. Health');
    const restarts = [...five.matchAll(/systemctl (?:restart|stop|start) (rewardbus\S*)/g)].map((m) => m[1]!);
    expect(restarts.length).toBeGreaterThan(0);
    for (const unit of restarts) expect(unit).toMatch(/^rewardbus-relay@/);
    const loop = /for port in ([\d ]+); do/.exec(five)?.[1] ?? '';
    expect(loop.trim().split(/\s+/)).toEqual(['8787', '8788']);
  });

  // §1 ran `install … docs/deploy/rewardbus-relay.service …` "on the server (the tarball in the
  // current directory)": there is no checkout there; the files are in the package just installed.
  it('§1 copies the unit and the nginx file from the package it installed, which ships them', () => {
    const install = commands(section(DEPLOY, '1. Install'));
    const from = install.flatMap((c) => [...c.matchAll(/^install\b.*?(\S*docs\/deploy\/\S+)/g)].map((m) => m[1]!));
    expect(from.length).toBe(2);
    const shipped = RELAY_PACKAGE_FILES.map(([, to]) => to.replace(/^packages\/relay\//, '/opt/rewardbus/node_modules/@rewardbus/relay/'));
    for (const file of from) expect(shipped, file).toContain(file);
  });
});

describe("the README's install (finding 12)", () => {
  /** The builds a command runs: `npm run build` one, `npm pack [dir]` one more through prepack (unless --ignore-scripts). */
  function builds(command: string): number {
    let n = 0;
    for (const step of command.split(/&&|;/).map((s) => s.trim())) {
      if (/^npm run build\b/.test(step)) n++;
      const pack = /^npm pack\b(.*)$/.exec(step);
      if (pack && !/--ignore-scripts\b/.test(pack[1]!)) {
        const dir = pack[1]!.split(/\s+/).find((a) => a && !a.startsWith('-')) ?? '.';
        const prepack = (JSON.parse(readFileSync(`${dir}/package.json`, 'utf8')) as { scripts?: { prepack?: string } }).scripts?.prepack ?? '';
        if (/\brun build\b/.test(prepack)) n++;
      }
    }
    return n;
  }

  it('finding 12: builds both packages once, then packs both tarballs; a plain npm pack (a clean checkout) still builds first', () => {
    const install = commands(section(README, 'Install'));
    const packs = install.filter((c) => /\bnpm pack\b/.test(c));
    expect(packs).toHaveLength(2);
    expect(install.reduce((n, c) => n + builds(c), 0)).toBe(1);
    // The build comes before the packs it feeds.
    expect(install.findIndex((c) => builds(c) > 0)).toBeLessThan(install.indexOf(packs[0]!));
    // From a clean checkout, `npm pack` alone builds (prepack): no empty tarball.
    for (const dir of ['.', './packages/relay']) expect(builds(`npm pack ${dir}`)).toBe(1);
  });
});
