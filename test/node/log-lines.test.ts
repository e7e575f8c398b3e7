import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';

// The relay's default destination (stdout, not a terminal), in a process of its own, behind a
// slow reader: every write to stdout takes 200 ms to come back, so the burst's first write is
// still under way when the rest of the burst and the last line are logged.
const SCRIPT = `
import fs from 'node:fs';
import { createLogger } from './src/relay/ops/logger.ts';
const write = fs.write;
fs.write = (fd, buf, cb) => write(fd, buf, (...a) => setTimeout(() => cb(...a), 200));
const log = createLogger('info');
for (let i = 0; i < 24; i++) log.info({ i, pad: 'x'.repeat(400) }, 'burst');
setImmediate(() => log.info('the last line'));
setInterval(() => undefined, 1000);
`;

describe('log lines on stdout', () => {
  it('are all written while the process lives, the last one too, though it came while a write was under way', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', SCRIPT], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      // Not a deadline for speed: a line held back stays held back however long one waits.
      await expect.poll(() => out.includes('the last line'), { timeout: 5_000 }).toBe(true);
      expect(out.match(/"msg":"burst"/g)).toHaveLength(24);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('are all written when the process exits in the same turn as it logs them', async () => {
    const script = `
      import { createLogger } from './src/relay/ops/logger.ts';
      const log = createLogger('info');
      for (let i = 0; i < 50; i++) log.info({ i }, 'at exit');
      process.exit(0);
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const [code] = (await once(child, 'close')) as [number];
    expect(code).toBe(0);
    expect(out.match(/"msg":"at exit"/g)).toHaveLength(50);
  });
});
