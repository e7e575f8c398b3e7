/**
 * A setting the relay cannot start with. Its message names the setting, says what was given
 * (unless it is a secret) and what is accepted: one line an operator can act on.
 */
export class SettingError extends Error {
  override name = 'SettingError';
  constructor(
    readonly setting: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Several bad settings at once: each on its own line, in the order of .env.example. */
export class SettingsError extends Error {
  override name = 'SettingsError';
  constructor(readonly errors: readonly SettingError[]) {
    super(errors.map((e) => e.message).join('\n'));
  }
}

/** The text of an error as a person reads it: Node's connection errors often have an empty message. */
export function reason(err: unknown): string {
  const e = err as NodeJS.ErrnoException & { errors?: unknown[] };
  if (e?.message) return e.message;
  if (e?.errors?.length) return reason(e.errors[0]);
  return e?.code ?? String(err);
}

/**
 * What went wrong when the server could not listen, naming HOST and PORT (and the options that
 * override them); undefined for any other error.
 */
export function listenErrorMessage(err: unknown, host: string, port: string): string | undefined {
  const e = err as NodeJS.ErrnoException & { syscall?: string };
  switch (e?.code) {
    case 'EADDRINUSE':
      return `PORT ${port} is in use on ${host}: stop what runs there, or choose another with PORT or --port N.`;
    case 'EACCES':
      return `PORT ${port} needs privileges this process lacks (ports below 1024 usually do): choose one from 1024 to 65535 with PORT or --port N.`;
    case 'EADDRNOTAVAIL':
      return `HOST ${host} is not an address of this machine: use one of its own addresses, 127.0.0.1 (this machine only) or 0.0.0.0 (every interface), with HOST or --host H.`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `HOST ${host} does not resolve to an address (${e.code}): use an IP address such as 127.0.0.1 or 0.0.0.0, or a name this machine resolves, with HOST or --host H.`;
    default:
      return e?.syscall === 'listen' ? `Cannot listen on HOST ${host}, PORT ${port}: ${reason(err)}.` : undefined;
  }
}
