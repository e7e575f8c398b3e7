// The relay's command as the tests start it in a process of its own: the package built once for
// this run (test/relay-build.ts), which starts on a third of the CPU the source through tsx takes.
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { inject } from 'vitest';
import { startRelayProcess } from './processes.js';

/** Node's arguments for `rewardbus-relay …args`. */
export const relayCommand = (...args: string[]): string[] => [join(inject('relayBuild'), 'bin', 'rewardbus.js'), ...args];

/** `rewardbus-relay start` with this environment (and Node options): its process and URL. */
export const startRelayCommand = (env: Record<string, string | undefined>, nodeArgs: string[] = []): Promise<{ child: ChildProcess; url: string }> =>
  startRelayProcess(env, nodeArgs, relayCommand('start'));
