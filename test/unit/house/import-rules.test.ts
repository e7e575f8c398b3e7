// The house's one-way doors, read from the code's own imports: a test fails, naming the file and
// the import, when one runs the wrong way. The rooms (../shared/STYLE.md, docs/layout.md):
// client ← phaser; relay ← sandbox only through the service's contract; client and relay share
// only the relay API's wire types; inside the relay, http → core → store's ports, the stores
// implement them, http reaches the payments service only through the core's use cases, and
// nothing imports the composition root (relay.ts). The client's rooms are reached only through
// their index.ts, and import each other one way.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = 'src';

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : /\.tsx?$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every relative import of a file (static, side-effect only, dynamic and re-exports), as a path under the repository. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/(?:from|import\(?)\s*['"](\.{1,2}\/[^'"]+)['"]/g)].map((m) => m[1]!);
  return specs.map((s) => normalize(join(dirname(file), s)).replace(/\.js$/, '.ts'));
}

interface Rule {
  /** Files it holds for (a path prefix under src). */
  from: string;
  /** Prefixes they must not import, or `only`: the prefixes they may import (besides their own room). */
  not?: string[];
  only?: string[];
  why: string;
}

const RULES: Rule[] = [
  { from: 'src/client/', only: ['src/client/', 'src/wire/'], why: 'the client runs in browsers: it shares only the wire types with the relay' },
  { from: 'src/phaser/', only: ['src/phaser/', 'src/client/', 'src/wire/'], why: 'the plugin is a thin adapter over the client' },
  { from: 'src/wire/', only: ['src/wire/'], why: 'the wire types are shared by both sides and depend on neither' },
  { from: 'src/contract/', only: ['src/contract/'], why: "the service's contract is shared by the relay and the sandbox and depends on neither" },
  { from: 'src/sandbox/', only: ['src/sandbox/', 'src/contract/', 'src/wire/'], why: 'the sandbox shares only the service’s contract with the relay' },
  {
    from: 'src/relay/',
    not: ['src/client/', 'src/phaser/', 'src/sandbox/', 'src/node/', 'src/bin/'],
    why: 'the relay is a web-standard handler: Node, the CLI and the sandbox are shells around it',
  },
  {
    from: 'src/relay/core/',
    not: ['src/relay/http/', 'src/relay/store/', 'src/relay/ops/', 'src/relay/relay.ts'],
    why: 'the core holds the domain and its ports (core/ports); the stores implement them',
  },
  {
    from: 'src/relay/core/ports/',
    only: ['src/relay/core/ports/', 'src/relay/core/lifecycle.ts', 'src/wire/'],
    why: "the ports say what a store does, in the domain's words, and nothing else",
  },
  { from: 'src/relay/store/', not: ['src/relay/http/', 'src/relay/ops/', 'src/relay/payments/', 'src/relay/relay.ts'], why: 'a store implements ports; it serves no request' },
  {
    from: 'src/relay/http/',
    not: ['src/relay/relay.ts', 'src/relay/store/', 'src/relay/payments/'],
    why: 'http maps requests to use cases and ports (the service only through the core); the composition root wires it, never the other way',
  },
  {
    from: 'src/relay/payments/',
    not: ['src/relay/ops/', 'src/relay/core/', 'src/relay/http/', 'src/relay/settings/'],
    why: "the payments client speaks the service's contract; it observes nothing and decides nothing",
  },
  {
    from: 'src/relay/settings/',
    not: ['src/relay/http/', 'src/relay/store/', 'src/relay/ops/', 'src/relay/relay.ts'],
    why: 'the settings are read before anything is built: they name values, not the rooms that use them',
  },
  {
    from: 'src/bin/',
    not: ['src/relay/core/settlements.ts', 'src/relay/core/payouts.ts', 'src/relay/core/reviews.ts', 'src/relay/core/claims.ts', 'src/relay/core/tournaments.ts'],
    why: 'the CLI takes its core from createCore, wired as the relay wires it, never piece by piece',
  },
];

describe("the house's import rules", () => {
  const all = files(SRC);
  for (const rule of RULES) {
    it(`${rule.from}: ${rule.why}`, () => {
      const broken = all
        .filter((f) => f.startsWith(rule.from))
        .flatMap((f) => importsOf(f).map((to) => ({ f, to })))
        .filter(({ to }) => (rule.only ? !rule.only.some((p) => to.startsWith(p)) : rule.not!.some((p) => to.startsWith(p))))
        .map(({ f, to }) => `${f} -> ${relative('.', to)}`);
      expect(broken).toEqual([]);
    });
  }

  // The client's rooms (src/client/<room>/): each has one door, its index.ts, and they import
  // each other in one direction only. The top (the bus, its courier, the events, the entries) composes them.
  const CLIENT = 'src/client/';
  const roomOf = (f: string) => (f.startsWith(CLIENT) && f.slice(CLIENT.length).includes('/') ? f.slice(CLIENT.length).split('/')[0] : undefined);

  it("src/client/<room>/: reached from outside the room only through the room's index.ts", () => {
    const broken = all
      .flatMap((f) => importsOf(f).map((to) => ({ f, to })))
      .filter(({ f, to }) => roomOf(to) !== undefined && roomOf(to) !== roomOf(f) && to !== `${CLIENT}${roomOf(to)}/index.ts`)
      .map(({ f, to }) => `${f} -> ${relative('.', to)}`);
    expect(broken).toEqual([]);
  });

  it("has no circle of the client's rooms importing each other", () => {
    const rooms = new Map<string, Set<string>>();
    for (const f of all) {
      const from = roomOf(f);
      if (!from) continue;
      for (const to of importsOf(f).map(roomOf)) if (to && to !== from) (rooms.get(from) ?? rooms.set(from, new Set()).get(from)!).add(to);
    }
    const circles: string[] = [];
    const visit = (room: string, path: string[]) => {
      if (path.includes(room)) return void circles.push([...path.slice(path.indexOf(room)), room].join(' -> '));
      for (const next of rooms.get(room) ?? []) visit(next, [...path, room]);
    };
    for (const room of rooms.keys()) visit(room, []);
    expect(rooms.size).toBeGreaterThan(3);
    expect(circles).toEqual([]);
  });

  it('has no circle of files importing each other', () => {
    const graph = new Map(all.map((f) => [f, importsOf(f).filter((t) => all.includes(t))]));
    const state = new Map<string, 'open' | 'done'>();
    const circles: string[] = [];
    const visit = (f: string, path: string[]) => {
      if (state.get(f) === 'done') return;
      if (state.get(f) === 'open') {
        circles.push([...path.slice(path.indexOf(f)), f].join(' -> '));
        return;
      }
      state.set(f, 'open');
      for (const t of graph.get(f) ?? []) visit(t, [...path, f]);
      state.set(f, 'done');
    };
    for (const f of all) visit(f, []);
    expect(circles).toEqual([]);
  });
});
