// `npm run bench -- --profile`: where the relay's main thread goes under the load, read from the
// V8 CPU profile (`node --cpu-prof`) the SQLite relay writes when it stops.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileLine {
  name: string;
  share: number;
}

const short = (url: string) =>
  url
    .replace(/^.*\/node_modules\//, '')
    .replace(/^file:\/\/.*\/src\//, 'src/')
    .replace(/^node:/, 'node:');

/** Self time per function (top `limit`), and the share spent in or under better-sqlite3's calls. */
export function summarizeProfile(dir: string, limit = 12): { top: ProfileLine[]; inclusive: ProfileLine[] } {
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) return { top: [], inclusive: [] };
  const p = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<number, number>();
  p.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)));
  let total = 0;
  let idle = 0;
  const selfByName = new Map<string, number>();
  // Inclusive time for a few named groups: a sample counts once per group it falls under.
  const groups: Array<[string, (n: ProfileNode) => boolean]> = [
    ['SQLite (better-sqlite3 calls)', (n) => n.callFrame.url.includes('better-sqlite3')],
    ['logging (pino)', (n) => n.callFrame.url.includes('/pino')],
    ['payments client (node:http requests)', (n) => n.callFrame.url.includes('/relay/payments/client')],
    ['request validation (zod)', (n) => n.callFrame.url.includes('/zod/')],
    ['garbage collection', (n) => n.callFrame.functionName === '(garbage collector)'],
  ];
  const groupTime = new Map<string, number>(groups.map(([g]) => [g, 0]));
  for (const [id, t] of self) {
    const n = byId.get(id)!;
    const name = n.callFrame.functionName || '(anonymous)';
    if (name === '(idle)' || name === '(program)') {
      if (name === '(idle)') idle += t;
      continue;
    }
    total += t;
    const key = `${name} ${short(n.callFrame.url)}${n.callFrame.url ? `:${n.callFrame.lineNumber + 1}` : ''}`;
    selfByName.set(key, (selfByName.get(key) ?? 0) + t);
    for (const [g, test] of groups) {
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        if (test(byId.get(at)!)) {
          groupTime.set(g, groupTime.get(g)! + t);
          break;
        }
      }
    }
  }
  const busy = total / (total + idle);
  const top = [...selfByName]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([name, t]) => ({ name, share: t / total }));
  const inclusive = [{ name: 'main thread busy (not idle)', share: busy }, ...[...groupTime].map(([name, t]) => ({ name, share: t / total }))];
  return { top, inclusive };
}
