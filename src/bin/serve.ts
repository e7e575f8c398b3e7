import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Logger } from 'pino';
import { createRelay, ledgerFile, loadCatalogFile, createLogger, type Relay, type RelayConfig, type RelayOptions } from '../relay/index.js';
import { createSandbox, type Sandbox, type SandboxOptions } from '../sandbox/index.js';

/** Where the embedded sandbox is mounted on the relay's own port. */
export const SANDBOX_PREFIX = '/sandbox';

export interface RunningServer {
  /** `http://host:port`, without a trailing slash. */
  url: string;
  relay: Relay;
  /** The embedded sandbox, when no API key is configured. */
  sandbox?: Sandbox;
  close(): Promise<void>;
}

export interface ServeOptions {
  logger?: Logger;
  sandbox?: SandboxOptions;
  /** Extra relay options (tests: verifyClaim, limits). */
  relay?: Partial<RelayOptions>;
  /** Answers requests the relay and sandbox do not (the demo's files). */
  fallback?: (request: Request) => Response | Promise<Response> | undefined;
}

/** Strips a path prefix, so a handler mounted below it sees its own paths. */
function below(prefix: string, request: Request): Request {
  const url = new URL(request.url);
  url.pathname = url.pathname.slice(prefix.length) || '/';
  return new Request(url, request);
}

/**
 * Starts the relay on Node. With no API key it mounts the sandbox on the same port, under
 * /sandbox, and pays through it over real HTTP, exactly as it would pay the service.
 */
export async function startServer(config: RelayConfig, options: ServeOptions = {}): Promise<RunningServer> {
  const logger = options.logger ?? createLogger();
  let relay: Relay | undefined;
  let sandbox: Sandbox | undefined;

  const server = serve({
    hostname: config.host,
    port: config.port,
    fetch: async (request, env) => {
      const { pathname } = new URL(request.url);
      if (sandbox && (pathname === SANDBOX_PREFIX || pathname.startsWith(`${SANDBOX_PREFIX}/`))) {
        return sandbox.fetch(below(SANDBOX_PREFIX, request));
      }
      if (!pathname.startsWith('/v1/') && options.fallback) {
        const answer = await options.fallback(request);
        if (answer) return answer;
      }
      return relay ? relay.fetch(request, env) : new Response('starting', { status: 503 });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;

  let payments = config.payments;
  // The embedded sandbox signs its webhooks with the relay's secret, or one made for this run.
  const webhookSecret = config.webhookSecret ?? (config.payments ? undefined : randomBytes(32).toString('hex'));
  if (!payments) {
    sandbox = createSandbox({ publicUrl: `${url}${SANDBOX_PREFIX}`, ...(webhookSecret ? { webhookSecret } : {}), ...options.sandbox });
    payments = { apiKey: sandbox.apiKey, baseUrl: `${url}${SANDBOX_PREFIX}` };
    logger.warn({ event: 'sandbox', url: `${url}${SANDBOX_PREFIX}` }, 'NO PAYMENTS_API_KEY: paying through the embedded sandbox; no real sats move');
  }
  relay = createRelay({
    payments: { ...payments, timeoutMs: config.paymentsTimeoutMs },
    ledger: ledgerFile(config),
    secret: config.secret,
    ...(config.catalogFile ? { catalog: loadCatalogFile(config.catalogFile) } : {}),
    allowedOrigins: config.allowedOrigins.length || config.payments ? config.allowedOrigins : ['*'],
    userDailyCapSats: config.userDailyCapSats,
    dailyBudgetSats: config.dailyBudgetSats,
    rateLimitPerMinute: config.rateLimitPerMinute,
    logger,
    mode: config.payments ? 'live' : 'sandbox',
    webhooks: { secret: webhookSecret },
    ...(config.publicUrl ? { publicUrl: config.publicUrl } : {}),
    ...options.relay,
  });
  await relay.ready;
  logger.info({ event: 'listening', url }, `rewardbus relay on ${url}`);
  logger.flush();

  const started = relay;
  return {
    url,
    relay: started,
    ...(sandbox ? { sandbox } : {}),
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as Server).closeAllConnections();
      });
      await started.close();
    },
  };
}
