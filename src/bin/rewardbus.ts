#!/usr/bin/env node
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { serve } from '@hono/node-server';
import { shutdownGraceMs, startServer } from '../node/start-server.js';
import { isHost } from '../relay/config.js';
import { secretList } from '../relay/core/secret-list.js';
import { loadConfig, VERSION } from '../relay/index.js';
import { settingsHelp } from '../relay/settings/docs.js';
import { SANDBOX_SETTINGS, SETTINGS } from '../relay/settings/schema.js';
import { listenErrorMessage, SettingError, SettingsError } from '../relay/settings-errors.js';
import { createSandbox, type Sandbox } from '../sandbox/index.js';
import { backup } from './backup.js';
import { review } from './review.js';
import { tournament } from './tournament.js';

/** The commands besides start, which a `start` given one of them as an argument was meant to be. */
const COMMANDS = ['sandbox', 'review', 'tournament', 'backup'];

const HELP = `rewardbus-relay ${VERSION}: pays players sats for achievements, each reward at most once.

Usage: rewardbus-relay [command] [options]        (npx @rewardbus/relay …; in this repository: npm run relay)

Commands:
  start [--port N] [--host H]             the relay (the default command); with no PAYMENTS_API_KEY it
                                          pays through the embedded sandbox, mounted at /sandbox;
                                          SIGTERM stops it gracefully (docs/deploy.md)
  sandbox [port]                          the sandbox alone (port: SANDBOX_PORT; key: SANDBOX_API_KEY)
  review list                             intents whose payment outcome is unclear
  review reconcile                        settle them through the payment-status endpoint
  review mark-paid <id> [transactionId]   you checked: it was paid
  review mark-failed <id>                 you checked: nothing was paid (frees its reservation)
  review held                             claims held for an operator's approval
  review approve <id>                     pay a held claim through the service, or credit it in balance mode
                                          (once, whoever else approves)
  review deny <id>                        refuse a held claim (denied_by_operator; frees its reservation)
                                          (--by NAME: the operator in the audit trail; default: your user)
  tournament post FILE                    a tournament's results, as the game's server posts them
                                          (FILE: { "tournamentId", "period", "ranking" }; --by NAME recorded)
  backup FILE [--force]                   a consistent copy of the SQLite ledger, while the relay runs
                                          (an existing FILE only with --force; on PostgreSQL: use pg_dump)

Options:
  -p, --port N      listen on this port (overrides PORT)
  --host H          listen on this interface (overrides HOST)
  -h, --help        this text
  -v, --version     the version

Environment (also read from ./.env; every setting is described in .env.example and docs/configuration.md):
${settingsHelp()}`;

/** Exit codes: 0 done, 1 failed, 2 the command line was wrong. */
async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        port: { type: 'string', short: 'p' },
        host: { type: 'string' },
        by: { type: 'string' },
        force: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
    });
  } catch (err) {
    console.error(`${usageError(err as NodeJS.ErrnoException)} See rewardbus-relay --help.`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) return say(HELP);
  if (values.version) return say(VERSION);
  if (values.port !== undefined && (!/^\d+$/.test(values.port) || Number(values.port) > 65535)) {
    console.error(`--port ${JSON.stringify(values.port)} is not accepted: it must be a whole number from 0 to 65535. See rewardbus-relay --help.`);
    return 2;
  }
  if (values.host !== undefined && !isHost(values.host)) {
    console.error(`--host ${JSON.stringify(values.host)} is not accepted: it must be an IP address (127.0.0.1, 0.0.0.0, ::1) or a host name. See rewardbus-relay --help.`);
    return 2;
  }
  if (existsSync('.env')) process.loadEnvFile('.env');
  if (values.port !== undefined) process.env.PORT = values.port;
  if (values.host !== undefined) process.env.HOST = values.host;

  const [command = 'start', sub, ...rest] = positionals;
  switch (command) {
    case 'start':
      // `npm run relay -- backup x` is `start backup x`, and `npm run relay -- 9999` (as the sandbox
      // takes its port) is `start 9999`: say what was meant rather than start a relay.
      if (sub !== undefined) {
        const given = `start takes no arguments (given: ${[sub, ...rest].join(' ')})`;
        if (/^\d+$/.test(sub)) console.error(`${given}: for the port, --port ${sub} (npm run relay -- --port ${sub}).`);
        else if (COMMANDS.includes(sub)) console.error(`${given}. Other commands: rewardbus-relay ${sub} … (in this repository: npm run review -- …, npm run backup -- FILE).`);
        else console.error(`${given}. See rewardbus-relay --help.`);
        return 2;
      }
      return start();
    case 'sandbox':
      if (rest.length) {
        console.error(`sandbox takes one port (given: ${[sub, ...rest].join(' ')}).`);
        return 2;
      }
      return sandboxAlone(sub ?? values.port, process.env.SANDBOX_PORT || SANDBOX_SETTINGS.SANDBOX_PORT.default);
    case 'review':
      return review(sub, rest, values.by);
    case 'tournament':
      return tournament(sub, rest, values.by);
    case 'backup':
      if (rest.length) {
        console.error(`backup takes one FILE (given: ${[sub, ...rest].join(' ')}).`);
        return 2;
      }
      return backup(sub, values.force);
    case 'help':
      return say(HELP);
    default:
      console.error(`Unknown command: ${command}. The commands are start, sandbox, review, tournament and backup; see rewardbus-relay --help.`);
      return 2;
  }
}

/** Node's parser's words for a wrong command line, put plainly (its own quote the option oddly). */
function usageError(err: NodeJS.ErrnoException): string {
  const option = /'(-[^']*)'/.exec(err.message)?.[1];
  switch (err.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `Unknown option ${option ?? ''}.`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return /argument missing/.test(err.message) ? `The option ${option?.replace(/ <value>$/, '') ?? ''} needs a value.` : `${err.message}.`;
    default:
      return err.message.endsWith('.') ? err.message : `${err.message}.`;
  }
}

function say(text: string): number {
  console.log(text);
  return 0;
}

async function start(): Promise<number> {
  const config = loadConfig();
  const running = await startServer(config);
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    // A second signal while stopping: the operator will not wait.
    if (stopping) process.exit(1);
    stopping = true;
    // Past the grace, payments still in flight get their own timeout to settle; then no longer.
    const bound = shutdownGraceMs(config) + config.paymentsTimeoutMs + 5_000;
    setTimeout(() => {
      console.error(`${signal}: the relay did not stop within ${bound} ms; exiting anyway (intents still sending are recovered at the next start)`);
      process.exit(1);
    }, bound).unref();
    running.close().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(`${signal}: stopping failed: ${err instanceof Error ? err.message : String(err)}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  return -1;
}

/** `given`: the command line's port, if any (--port is checked already); else `setting`, SANDBOX_PORT's. */
async function sandboxAlone(given: string | undefined, setting: string): Promise<number> {
  const raw = given ?? setting;
  if (!/^\d+$/.test(raw) || Number(raw) > 65535) {
    // Named as it was given, so the one to fix is plain.
    const accepted = 'is not accepted: it must be a whole number from 0 to 65535.';
    console.error(given === undefined ? `SANDBOX_PORT ${JSON.stringify(raw)} ${accepted}` : `The sandbox port ${JSON.stringify(raw)} ${accepted} See rewardbus-relay --help.`);
    return 2;
  }
  const port = Number(raw);
  // Several keys, comma-separated, while one is rotated out: all are accepted.
  const [apiKey = SANDBOX_SETTINGS.SANDBOX_API_KEY.default, ...moreApiKeys] = secretList(process.env.SANDBOX_API_KEY);
  // Signs its webhooks and withdrawal callbacks as the relay's WEBHOOK_SECRET verifies them; a
  // NEW,OLD list (the relay's form while rotating) signs with the first, as the relay's own sandbox does.
  const [webhookSecret] = secretList(process.env.SANDBOX_WEBHOOK_SECRET);
  // Its widget_url names the port it listens on, known only once it listens (`sandbox 0` picks
  // one): made then, before any connection can be taken.
  let sandbox: Sandbox | undefined;
  const server = serve({ fetch: (request) => sandbox!.fetch(request), port, hostname: '127.0.0.1' }, (info) => {
    sandbox = createSandbox({ apiKey, moreApiKeys, publicUrl: `http://127.0.0.1:${info.port}`, ...(webhookSecret ? { webhookSecret } : {}) });
    console.log(`rewardbus sandbox on http://127.0.0.1:${info.port} (webhooks ${webhookSecret ? 'signed with SANDBOX_WEBHOOK_SECRET' : 'unsigned: no SANDBOX_WEBHOOK_SECRET'})`);
  });
  // A port it cannot listen on is said plainly, not thrown as an unhandled 'error' with a stack.
  server.once('error', (err: NodeJS.ErrnoException) => {
    const where = `The sandbox port ${port}`;
    console.error(
      err.code === 'EADDRINUSE'
        ? `${where} is in use on 127.0.0.1: stop what runs there, or choose another (npm run sandbox -- PORT, or SANDBOX_PORT).`
        : `${where}: cannot listen on 127.0.0.1 (${err.code ?? err.message}); choose another (npm run sandbox -- PORT, or SANDBOX_PORT).`,
    );
    process.exit(1);
  });
  return -1;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err: NodeJS.ErrnoException) => {
    const listen = listenErrorMessage(err, process.env.HOST || SETTINGS.HOST.default, process.env.PORT || SETTINGS.PORT.default);
    const named = err instanceof SettingError || err instanceof SettingsError;
    console.error(listen ?? (named ? `${err.message}\nEvery setting is described in .env.example and rewardbus-relay --help.` : err.message));
    process.exit(1);
  },
);
