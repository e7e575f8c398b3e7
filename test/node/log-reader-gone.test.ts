import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';

// The relay's default destination, with its reader gone: the last lines are logged and the
// process exits in the same turn, so they are still unwritten (one of them being written) when
// the exit comes.
const SCRIPT = `
import { createLogger } from './src/relay/ops/logger.ts';
const log = createLogger('info');
log.info('ready');
process.on('SIGUSR2', () => {
  log.info('stopping');
  log.info('stopped');
  process.exit(0);
});
setInterval(() => undefined, 1000);
`;

describe('a relay whose log reader is gone', () => {
  it('still exits: the lines it cannot write are dropped', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', SCRIPT], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      await expect.poll(() => out.includes('ready')).toBe(true);
      child.stdout.destroy();
      const exited = once(child, 'exit');
      child.kill('SIGUSR2');
      // Before the fix it wrote to the broken pipe every 100 ms, for ever.
      const [code] = await Promise.race([exited, new Promise<[string]>((r) => setTimeout(() => r(['still running']), 5_000))]);
      expect(code).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
