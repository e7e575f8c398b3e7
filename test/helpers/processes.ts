// Child processes for tests and the bench: a relay (or any TypeScript entry) in its own process,
// started and stopped the same way everywhere.
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';

/** Starts a Node child and resolves once it prints `pattern`. A TypeScript entry runs through tsx. */
export function startChild(
  args: string[],
  env: Record<string, string | undefined>,
  pattern: RegExp,
  nodeArgs: string[] = [],
): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  const tsx = args[0]?.endsWith('.ts') ? ['--import', 'tsx'] : [];
  const child = spawn(process.execPath, [...nodeArgs, ...tsx, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = pattern.exec(out);
      if (m) {
        child.stdout!.off('data', onData);
        // Keep draining what it logs, so a full pipe never stalls it.
        child.stdout!.resume();
        resolve({ child, match: m });
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}: ${out}`)));
  });
}

/**
 * The relay's own command (`start`) with this environment (and Node options): its process and the
 * URL it listens on. `entry`: another script that starts it the same way (the bench's).
 */
export async function startRelayProcess(
  env: Record<string, string | undefined>,
  nodeArgs: string[] = [],
  entry = ['src/bin/rewardbus.ts', 'start'],
): Promise<{ child: ChildProcess; url: string }> {
  const { child, match } = await startChild(entry, { PORT: '0', LOG_LEVEL: 'info', ...env }, /"url":"(http:\/\/[^"]+)","msg":"rewardbus relay/, nodeArgs);
  return { child, url: match[1]! };
}

export function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** A TCP port free right now on loopback. */
export const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
