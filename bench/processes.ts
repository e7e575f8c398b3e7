import { spawn, type ChildProcess } from 'node:child_process';

/** Starts a Node child running a TypeScript entry and resolves once it prints `pattern`. */
export function startChild(args: string[], env: Record<string, string>, pattern: RegExp): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
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

export function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
