import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';

const children: Array<ReturnType<typeof spawn>> = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

/**
 * A process logging through the relay's default destination (stdout, not a terminal): `script`
 * runs after `log` is made. `out()` is what its stdout said so far.
 */
function logging(script: string) {
  const source = `import fs from 'node:fs';\nimport { createLogger } from './src/relay/ops/logger.ts';\nconst log = createLogger('info');\n${script}`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', source], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  return { child, out: () => out };
}

describe('log lines on stdout', () => {
  it('are all written while the process lives, the last one too, though it came while a write was under way', async () => {
    // Behind a slow reader: every write to stdout takes 200 ms to come back, so the burst's first
    // write is still under way when the rest of the burst and the last line are logged.
    const { out } = logging(`
      const write = fs.write;
      fs.write = (fd, buf, cb) => write(fd, buf, (...a) => setTimeout(() => cb(...a), 200));
      for (let i = 0; i < 24; i++) log.info({ i, pad: 'x'.repeat(400) }, 'burst');
      setImmediate(() => log.info('the last line'));
      setInterval(() => undefined, 1000);
    `);
    // Not a deadline for speed: a line held back stays held back however long one waits.
    await expect.poll(() => out().includes('the last line'), { timeout: 5_000 }).toBe(true);
    expect(out().match(/"msg":"burst"/g)).toHaveLength(24);
  });

  it('are all written when the process exits in the same turn as it logs them', async () => {
    const { child, out } = logging(`
      for (let i = 0; i < 50; i++) log.info({ i }, 'at exit');
      process.exit(0);
    `);
    const [code] = (await once(child, 'close')) as [number];
    expect(code).toBe(0);
    expect(out().match(/"msg":"at exit"/g)).toHaveLength(50);
  });

  it('end, not the process, when their reader is gone: it still exits', async () => {
    // The last lines are logged and the process exits in the same turn, so they are still
    // unwritten (one of them being written) when the exit comes.
    const { child, out } = logging(`
      log.info('ready');
      process.on('SIGUSR2', () => {
        log.info('stopping');
        log.info('stopped');
        process.exit(0);
      });
      setInterval(() => undefined, 1000);
    `);
    await expect.poll(() => out().includes('ready')).toBe(true);
    child.stdout!.destroy();
    const exited = once(child, 'exit');
    child.kill('SIGUSR2');
    // Before the fix it wrote to the broken pipe every 100 ms, for ever.
    const [code] = await Promise.race([exited, new Promise<[string]>((r) => setTimeout(() => r(['still running']), 5_000))]);
    expect(code).toBe(0);
  });
});
