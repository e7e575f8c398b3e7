import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fileStorage, type RewardOutcome } from '../../src/client/node.js';
import { busMaker, controlledFetch } from '../helpers/client.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';

let relay: TestRelay | undefined;
const children: ChildProcess[] = [];
const { bus, destroyAll } = busMaker(
  () => relay!.url,
  () => fileStorage(queueFile()),
);
afterEach(async () => {
  destroyAll();
  for (const c of children.splice(0)) c.kill();
  await relay?.stop();
  relay = undefined;
});
const queueFile = () => join(mkdtempSync(join(tmpdir(), 'rewardbus-queue-file-')), 'queue.json');
const storedIntents = (file: string) => Object.keys(JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>).filter((k) => k.startsWith('intent:'));

/** A game server in its own process on the queue file (fixtures/unlock-when-told.ts): `unlock()` unlocks and resolves with the intent's id. */
function gameServer(file: string, achievementId: string, gamertag: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/client/fixtures/unlock-when-told.ts', relay!.url, file, achievementId, gamertag], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  children.push(child);
  let out = '';
  const waiters: Array<() => void> = [];
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    for (const w of waiters.splice(0)) w();
  });
  const line = (pattern: RegExp, from: number) =>
    new Promise<string>((resolve, reject) => {
      const look = () => {
        const m = pattern.exec(out.slice(from));
        if (m) resolve(m[1] ?? m[0]);
        else if (child.exitCode !== null) reject(new Error(`${achievementId}'s process exited: ${out}`));
        else waiters.push(look);
      };
      child.once('exit', look);
      look();
    });
  return {
    ready: line(/^ready$/m, 0),
    unlock() {
      const from = out.length;
      child.stdin!.write('\n');
      return line(/^unlocked (\S+)$/m, from);
    },
  };
}

const paidIds = (b: ReturnType<typeof bus>, n: number) =>
  new Promise<string[]>((resolve) => {
    const ids: string[] = [];
    b.on('reward:paid', (o: RewardOutcome) => {
      ids.push(o.intent.id);
      if (ids.length === n) resolve(ids.sort());
    });
  });

// Two game servers, or a server restarted while the old one still writes, on one queue file
// (the default, `.rewardbus/client-queue.json`, is the same file for every process started in
// one folder): each writes its own queue; neither's intent may be lost.
describe("the Node client's queue file shared by several writers", () => {
  it('keeps the intents of two game-server processes each unlocking on the file, and a bus on it pays both once', async () => {
    relay = await startTestRelay();
    const file = queueFile();
    const a = gameServer(file, 'first-coin', 'alice');
    const b = gameServer(file, 'daily-login', 'bob');
    await Promise.all([a.ready, b.ready]);
    // Both read the file before either wrote its intent.
    const first = await a.unlock();
    const second = await b.unlock();
    expect(storedIntents(file).sort()).toEqual([`intent:${first}`, `intent:${second}`].sort());

    for (const c of children.splice(0)) c.kill();
    const paid = paidIds(bus({ storage: fileStorage(file) }), 2);
    expect(await paid).toEqual([first, second].sort());
    expect(relay.sandbox!.payments()).toHaveLength(2);
  });

  it('keeps the intents of two buses of one process on the file named two ways', async () => {
    relay = await startTestRelay();
    const file = queueFile();
    const net = controlledFetch();
    const a = bus({ storage: fileStorage(file), fetch: net.fetch });
    const b = bus({ storage: fileStorage(relative(process.cwd(), file)), fetch: net.fetch });
    await a.link('alice');
    await b.ready;
    net.offline = true;
    const first = a.unlock('first-coin')!;
    await a.flush();
    const second = b.unlock('daily-login')!;
    await b.flush();
    expect(storedIntents(file).sort()).toEqual([`intent:${first}`, `intent:${second}`].sort());
  });
});

// The file's lock (src/client/file-lock.ts): a writer that died holding it must not stop every
// later write, and a live one is waited for.
describe("the queue file's lock", () => {
  const exited = () =>
    new Promise<number>((resolve) => {
      const child = spawn(process.execPath, ['-e', '0']);
      child.once('exit', () => resolve(child.pid!));
    });

  it('is taken over at once from a process of this host that is gone, and after 30 s from anyone', async () => {
    const file = queueFile();
    writeFileSync(`${file}.lock`, JSON.stringify({ pid: await exited(), host: hostname(), token: 'x' }));
    await fileStorage(file).setMany([['intent:a', { id: 'a' }]]);
    // Another host's, or one whose holder never said who it is: by its age alone.
    const other = queueFile();
    writeFileSync(`${other}.lock`, '');
    const old = new Date(Date.now() - 31_000);
    utimesSync(`${other}.lock`, old, old);
    await fileStorage(other).setMany([['intent:b', { id: 'b' }]]);
    expect([storedIntents(file), storedIntents(other), existsSync(`${file}.lock`), existsSync(`${other}.lock`)]).toEqual([['intent:a'], ['intent:b'], false, false]);
  });

  it('is waited for while its holder lives, and the write goes once it lets go', async () => {
    const file = queueFile();
    writeFileSync(`${file}.lock`, JSON.stringify({ pid: process.pid, host: hostname(), token: 'x' }));
    let done = false;
    const write = fileStorage(file)
      .setMany([['intent:a', { id: 'a' }]])
      .then(() => (done = true));
    await new Promise((r) => setTimeout(r, 300));
    expect([done, existsSync(file)]).toEqual([false, false]);
    rmSync(`${file}.lock`);
    await write;
    expect(storedIntents(file)).toEqual(['intent:a']);
  });
});

// A queue file that is no queue (cut short by a disk, edited by hand): its intents cannot be read
// whatever is done, but it must not also lose every intent from now on.
describe('a queue file that is not JSON', () => {
  it('is set aside (kept, with a warning naming both files), and the bus stores, sends and pays from a new one', async () => {
    relay = await startTestRelay();
    const file = queueFile();
    writeFileSync(file, '{"intent:x":{"id":');
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const b = bus({ storage: fileStorage(file) });
      await b.link('alice');
      const paid = paidIds(b, 1);
      const id = b.unlock('first-coin')!;
      expect(await paid).toEqual([id]);
      const aside = readdirSync(dirname(file)).filter((f) => f.startsWith('queue.json.corrupt-'));
      expect(aside).toHaveLength(1);
      expect(readFileSync(join(dirname(file), aside[0]!), 'utf8')).toBe('{"intent:x":{"id":');
      expect(warn).toHaveBeenCalledWith(expect.stringContaining(file));
      expect(String(warn.mock.calls[0]![0])).toContain(aside[0]);
    } finally {
      warn.mockRestore();
    }
  });
});
