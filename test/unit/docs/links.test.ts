// What the docs point at must be there: every link between them (and its anchor), every path of
// this repository and every `npm run` script they name, and every link into them from the code
// (a problem's type, the CLI's pointer). A file moved, a heading renamed or a script dropped
// fails here, naming the doc and what it points at.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RELAY_PACKAGE_FILES } from '../../../esbuild.config.mjs';

/** The docs a reader follows. docs/benchmark.md is a measurement log, left as it was written. */
const DOCS = ['README.md', 'SECURITY.md', 'packages/relay/README.md', ...readdirSync('docs').flatMap((f) => (f.endsWith('.md') && f !== 'benchmark.md' ? [`docs/${f}`] : []))];

/** Where a file of the relay's package comes from in this repository (its README links to the docs it ships). */
const PACKAGED = new Map(RELAY_PACKAGE_FILES.map(([from, to]) => [to, from]));
const sourceOf = (path: string) => PACKAGED.get(path) ?? path;

/** The text outside fenced code blocks: a shell line or a JSON example is no link. */
const prose = (text: string) => text.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '');

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as dashes. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/ /g, '-');

/** Every anchor a markdown file has: its headings' (a repeated one numbered, as GitHub does) and its `<a id>`s. */
function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, 'utf8');
  const seen = new Map<string, number>();
  const anchors = new Set([...text.matchAll(/<a (?:id|name)="([^"]+)"/g)].map((m) => m[1]!));
  for (const [, heading] of prose(text).matchAll(/^#{1,6} (.+)$/gm)) {
    const s = slug(heading!);
    const n = seen.get(s) ?? 0;
    anchors.add(n ? `${s}-${n}` : s);
    seen.set(s, n + 1);
  }
  return anchors;
}

/** Why `href`, written in `from`, leads nowhere; undefined when it leads somewhere. */
function broken(from: string, href: string): string | undefined {
  const [path, anchor] = href.split('#');
  const target = sourceOf(path ? normalize(join(dirname(from), path)) : from);
  if (!existsSync(target)) return `${from}: ${href} (no ${target})`;
  if (anchor !== undefined && target.endsWith('.md') && !anchorsOf(target).has(anchor)) return `${from}: ${href} (no #${anchor} in ${target})`;
  return undefined;
}

describe('the docs', () => {
  it('link to files and anchors that exist', () => {
    const links = DOCS.flatMap((doc) => [...prose(readFileSync(doc, 'utf8')).matchAll(/\]\(([^)\s]+)\)/g)].map((m) => [doc, m[1]!] as const));
    expect(links.length).toBeGreaterThan(50);
    expect(links.filter(([, href]) => !/^[a-z]+:/.test(href)).flatMap(([doc, href]) => broken(doc, href) ?? [])).toEqual([]);
  });

  it("name only this repository's paths that exist", () => {
    // service-facts.md also names the service's own clients' files (@zbdpay/ramp-ts's src/types.ts, …).
    const named = DOCS.filter((doc) => doc !== 'docs/service-facts.md').flatMap((doc) =>
      [...readFileSync(doc, 'utf8').matchAll(/`((?:src|test|docs|bench|scripts|demo)\/[\w./-]+)`/g)].map((m) => [doc, m[1]!] as const),
    );
    expect(named.length).toBeGreaterThan(20);
    expect(named.filter(([, path]) => !existsSync(path)).map(([doc, path]) => `${doc}: ${path}`)).toEqual([]);
  });

  it('run only npm scripts package.json has', () => {
    const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts;
    const run = DOCS.flatMap((doc) => [...readFileSync(doc, 'utf8').matchAll(/npm run ([\w-]+(?::[\w-]+)*)/g)].map((m) => [doc, m[1]!] as const));
    expect(run.filter(([, script]) => !(script in scripts)).map(([doc, script]) => `${doc}: npm run ${script}`)).toEqual([]);
  });
});

describe('the relay command the docs name', () => {
  // .env.example said `rewardbus review`: the client package's forwarder, absent where only the relay is installed.
  it('is rewardbus-relay, with a command its --help lists', () => {
    const help = readFileSync('src/bin/rewardbus.ts', 'utf8');
    const commands = new Set([...help.slice(help.indexOf('Commands:'), help.indexOf('Options:')).matchAll(/^ {2}([a-z]+)/gm)].map((m) => m[1]!));
    expect([...commands].sort()).toEqual(['backup', 'review', 'sandbox', 'start', 'tournament']);
    const named = [...DOCS, '.env.example'].flatMap((doc) =>
      // "rewardbus sandbox on http://…" is the sandbox's first line, quoted: not a command.
      [...readFileSync(doc, 'utf8').matchAll(/\brewardbus(-relay)? ([a-z][\w-]*)(?! on http)/g)].map((m) => [doc, m[0], m[1], m[2]!] as const),
    );
    expect(named.length).toBeGreaterThan(10);
    const wrong = named.filter(([, , relay, command]) => (relay ? !commands.has(command) : commands.has(command)));
    expect(wrong.map(([doc, said]) => `${doc}: ${said}`)).toEqual([]);
  });
});

describe("the relay package's own texts", () => {
  // `rewardbus-relay --help` sent an installed relay's operator to docs/configuration.md, which the package did not ship.
  it('name only docs the package ships (its --help, .env.example, README and the docs it carries)', () => {
    const shipped = new Set(RELAY_PACKAGE_FILES.map(([, to]) => to.replace(/^packages\/relay\//, '')));
    const texts = [
      'src/bin/rewardbus.ts',
      'src/bin/backup.ts',
      '.env.example',
      'packages/relay/README.md',
      ...RELAY_PACKAGE_FILES.flatMap(([from]) => (from.endsWith('.md') ? [from] : [])),
    ];
    const named = texts.flatMap((file) => [...readFileSync(file, 'utf8').matchAll(/\bdocs\/[\w/-]+\.(?:md|conf|service)\b/g)].map((m) => [file, m[0]] as const));
    expect(named.length).toBeGreaterThan(5);
    expect(named.filter(([, doc]) => !shipped.has(doc)).map(([file, doc]) => `${file}: ${doc}`)).toEqual([]);
  });
});

describe('links into the docs from the code', () => {
  /** Every `github.com/rewardbus/rewardbus…#anchor` written out in src/: the README's, or a doc's on main. */
  function linksInCode(dir: string): [string, string][] {
    return readdirSync(dir, { withFileTypes: true }).flatMap((e): [string, string][] => {
      const path = join(dir, e.name);
      if (e.isDirectory()) return linksInCode(path);
      return [...readFileSync(path, 'utf8').matchAll(/github\.com\/rewardbus\/rewardbus(?:\/blob\/main\/([\w./-]+))?#([\w-]+)/g)].map((m) => [
        path,
        `${m[1] ?? 'README.md'}#${m[2]}`,
      ]);
    });
  }

  it('lead to anchors that exist', () => {
    const links = linksInCode('src');
    expect(links.length).toBeGreaterThan(0);
    expect(links.flatMap(([file, href]) => broken('.', href)?.replace(/^\.:/, `${file}:`) ?? [])).toEqual([]);
  });
});
