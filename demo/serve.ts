// npm start: builds the demo, starts the relay with the embedded sandbox, and serves the demo
// from the same port. No API key, no network.
import { readFile } from 'node:fs/promises';
import { build } from 'esbuild';
import { demoBuild } from '../esbuild.config.mjs';
import { type RunningServer, type ServeOptions, startServer } from '../src/node/start-server.js';
import { DEFAULT_CATALOG, DEFAULTS, loadConfig, type RelayConfig, SETTINGS } from '../src/relay/index.js';
import { listenErrorMessage } from '../src/relay/settings-errors.js';
import type { ReferralProgram } from '../src/wire/relay-api.js';
import { DEMO_CATALOG, DEMO_GAME_SERVER_SECRET } from './game-server.js';

/** The demo's referral program (issue 37; demo/catalog.json, which `npm start` uses, has it too): a friend who links with your `?ref=` link and completes a level earns you both sats. */
export const DEMO_REFERRAL: ReferralProgram = {
  id: 'invite-a-friend',
  kind: 'referral',
  title: 'Invite a friend',
  referrerSats: 50,
  refereeSats: 25,
  afterPlaySeconds: 20,
  afterAchievement: 'level-complete',
  perReferrerDaily: 5,
};

export async function startDemo(config: RelayConfig = loadConfig(), options: ServeOptions = {}): Promise<RunningServer> {
  const [bundle, html] = await Promise.all([build(demoBuild), readFile(new URL('./index.html', import.meta.url), 'utf8')]);
  const mainJs = bundle.outputFiles![0]!.text;
  // Phaser draws its built-in textures from data: and blob: URLs; the overlays style inline. The ramp's
  // widget is framed from the service's origin (any https one, or a standalone sandbox's over http).
  const widget = config.payments ? ` https: ${new URL(config.payments.baseUrl).origin}` : '';
  const csp =
    "default-src 'self'; img-src 'self' data: blob:; media-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; " +
    `frame-src 'self'${widget}; frame-ancestors 'none'; object-src 'none'; base-uri 'none'`;
  const files: Record<string, [string, string]> = {
    '/': [html, 'text/html; charset=utf-8'],
    '/index.html': [html, 'text/html; charset=utf-8'],
    '/main.js': [mainJs, 'text/javascript; charset=utf-8'],
  };
  return startServer(config, {
    ...options,
    // Without RELAY_CATALOG, the demo's achievements and its referral program.
    ...(config.catalogFile ? {} : { relay: { catalog: [...DEFAULT_CATALOG, DEMO_REFERRAL], ...options.relay } }),
    fallback: (request) => {
      const file = files[new URL(request.url).pathname];
      return (
        file && new Response(file[0], { headers: { 'content-type': file[1], 'cache-control': 'no-store', 'content-security-policy': csp, 'x-content-type-options': 'nosniff' } })
      );
    },
  });
}

/**
 * `npm start -- --payout balance`: the relay credits rewards to a balance the player withdraws
 * from (docs/balance.md); the player plays as a guest first. A demo withdraws from 20 sats.
 */
export function payoutFromArgs(args: string[], env: NodeJS.ProcessEnv) {
  const i = args.indexOf('--payout');
  if (i < 0) return;
  const mode = args[i + 1];
  if (mode !== 'balance' && mode !== 'instant') throw new Error(`--payout takes balance or instant, not ${mode ?? 'nothing'}`);
  env.RELAY_PAYOUT_MODE = mode;
  if (mode === 'balance') env.RELAY_MIN_WITHDRAWAL_SATS ??= '20';
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { existsSync } = await import('node:fs');
  if (existsSync('.env')) process.loadEnvFile('.env');
  try {
    payoutFromArgs(process.argv.slice(2), process.env);
  } catch (err) {
    // A wrong command line is said in a line, not thrown with a stack.
    console.error((err as Error).message);
    process.exit(1);
  }
  // The demo's daily high-score tournament: demo/tournament.ts posts its results as the game's server.
  process.env.RELAY_CATALOG ??= DEMO_CATALOG;
  process.env.RELAY_GAME_SERVER_SECRET ??= DEMO_GAME_SERVER_SECRET;
  const server = await startDemo().catch((err: NodeJS.ErrnoException) => {
    // A listen error names HOST or PORT as the relay's own command does.
    const port = process.env.PORT || DEFAULTS.port;
    const listen = listenErrorMessage(err, process.env.HOST || SETTINGS.HOST.default, String(port));
    console.error(err.code === 'EADDRINUSE' ? `Port ${port} is in use: stop what runs there, or set PORT=…` : (listen ?? err.message));
    process.exit(1);
  });
  console.log(`\n  Coin Rush, the rewardbus demo: ${server.url}/${process.env.RELAY_PAYOUT_MODE === 'balance' ? '  (balance mode: earn as a guest, withdraw later)' : ''}`);
  if (server.adminToken) console.log(`  The operator's page:          ${server.url}/admin  (token: ${server.adminToken})`);
  console.log(`  Today's high scores:          RELAY_URL=${server.url} node --import tsx demo/tournament.ts ada:1200 bob:800  (once ada and bob have linked)`);
  console.log('');
  const stop = () => void server.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
