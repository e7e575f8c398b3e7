import { randomBytes } from 'node:crypto';
import { createServer, type Server, type ServerOptions } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { getRequestListener, RequestError, serve } from '@hono/node-server';
import { getPath } from 'hono/utils/url';
import type { Logger } from 'pino';
import { signingSecret } from '../relay/http/routes/webhooks.js';
import { createLogger, createRelay, openConfiguredStore, PROBLEMS, type Relay, type RelayConfig, type RelayOptions, relayOptions, SECURITY_HEADERS } from '../relay/index.js';
import { createSandbox, type Sandbox, type SandboxOptions } from '../sandbox/index.js';
import { gracefulShutdown, type ShutdownReport } from './graceful-shutdown.js';

/**
 * How long a stopping relay lets requests under way finish: a claim waits on at most two calls to
 * the service (the gamertag, then the payment), plus a little.
 */
export const shutdownGraceMs = (config: Pick<RelayConfig, 'paymentsTimeoutMs'>): number => 2 * config.paymentsTimeoutMs + 2_000;

/** Where the embedded sandbox is mounted on the relay's own port. */
export const SANDBOX_PREFIX = '/sandbox';
const SANDBOX_CONTROLS = `${SANDBOX_PREFIX}/_sandbox/`;

/** A loopback address (or name): this machine only. */
export const isLoopback = (address: string | undefined): boolean =>
  address !== undefined && (/^127\./.test(address) || address === '::1' || address === 'localhost' || /^::ffff:127\./i.test(address));

const notHere = () =>
  new Response(JSON.stringify({ type: 'about:blank', title: 'Not found', status: 404, code: 'not_found' }), {
    status: 404,
    headers: [['content-type', 'application/problem+json'], ...SECURITY_HEADERS.map(([k, v]): [string, string] => [k, v])],
  });

const problem = (status: number, title: string, code: string) =>
  new Response(JSON.stringify({ type: 'about:blank', title, status, code }), {
    status,
    headers: [['content-type', 'application/problem+json'], ...SECURITY_HEADERS.map(([k, v]): [string, string] => [k, v])],
  });

/** What the adapter cannot hand the relay: a request no URL can be made of is the client's (400), anything else a 500, as problems. */
const adapterRefusal = (logger: Logger) => (err: unknown) => {
  if (err instanceof RequestError) return problem(400, 'Bad Request', 'bad_request');
  logger.error({ err }, 'relay error');
  return problem(500, 'Internal Server Error', 'internal');
};

/** Node's own refusals (400, 408, 431) as problem+json, with the relay's security headers. */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex) {
  if (!socket.writable || err.code === 'ECONNRESET') return void socket.destroy();
  const [reason, code] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? (['Request Header Fields Too Large', 'headers_too_large'] as const)
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? (['Request Timeout', 'request_timeout'] as const)
        : (['Bad Request', 'bad_request'] as const);
  // The status and title the relay's list gives the code (docs/relay-api.md#errors lists it).
  const [status, title] = PROBLEMS[code];
  const body = JSON.stringify({ type: 'about:blank', title, status, code });
  const headers = [['Content-Type', 'application/problem+json'], ['Content-Length', String(Buffer.byteLength(body))], ...SECURITY_HEADERS, ['Connection', 'close']];
  socket.end(`HTTP/1.1 ${status} ${reason}\r\n${headers.map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n${body}`);
}

/** `http://host:port/path…`'s path as far as a plain one goes: no dot, `%` or backslash in it. */
const PLAIN_PATH = /^https?:\/\/[\w.:[\]-]*(\/[\w/-]*)(?:[?#]|$)/;

/**
 * The request's path, as `new URL(url).pathname` gives it: read straight off the string when it is
 * plain (every request a game sends), through URL's parser only otherwise (dot segments, escapes).
 */
export const pathOf = (url: string): string => PLAIN_PATH.exec(url)?.[1] ?? new URL(url).pathname;

export interface RunningServer {
  /** `http://host:port`, without a trailing slash. */
  url: string;
  relay: Relay;
  /** The embedded sandbox, when no API key is configured. */
  sandbox?: Sandbox;
  /** The operator's token (/admin, /metrics), when the surface is on. */
  adminToken?: string;
  /**
   * Stops gracefully: no new connections, new requests on kept-alive sockets answered 503
   * shutting_down, event streams closed, requests under way given `graceMs` (default
   * shutdownGraceMs(config)), payments in flight settled, the store closed.
   */
  close(options?: { graceMs?: number }): Promise<ShutdownReport>;
}

export interface ServeOptions {
  logger?: Logger;
  sandbox?: SandboxOptions;
  /** Extra relay options (tests: verifyClaim, limits). */
  relay?: Partial<RelayOptions>;
  /** Answers requests the relay and sandbox do not (the demo's files). */
  fallback?: (request: Request) => Response | Promise<Response> | undefined;
}

/**
 * Starts the relay on Node. With no API key it mounts the sandbox on the same port, under
 * /sandbox, and pays through it over real HTTP, exactly as it would pay the service.
 */
export async function startServer(config: RelayConfig, options: ServeOptions = {}): Promise<RunningServer> {
  const logger = options.logger ?? createLogger(config.logLevel, undefined, config.payments ? [config.payments.apiKey] : []);
  // The store first: one that cannot be opened is the first (and only) thing said.
  const store = await openConfiguredStore(config, logger);
  let relay: Relay | undefined;
  let sandbox: Sandbox | undefined;
  let drain: ReturnType<typeof gracefulShutdown> | undefined;

  const handle = async (request: Request, env: { incoming?: { socket?: { remoteAddress?: string } } }) => {
    const pathname = pathOf(request.url);
    const isSandbox = sandbox && (pathname === SANDBOX_PREFIX || pathname.startsWith(`${SANDBOX_PREFIX}/`));
    // A probe of /v1/ready is answered by the relay itself: 503 not_ready, draining.
    if (drain?.draining && !isSandbox && !(pathname === '/v1/ready' && relay)) return drain.refusal();
    if (sandbox && (pathname === SANDBOX_PREFIX || pathname.startsWith(`${SANDBOX_PREFIX}/`))) {
      // The test controls (rename any player, list payments) are for this machine only.
      // Checked on the path as the sandbox's router reads it (decoded): `/sandbox/%5Fsandbox/` is a control too.
      if (getPath(request).startsWith(SANDBOX_CONTROLS) && !isLoopback(env.incoming?.socket?.remoteAddress)) return notHere();
      return sandbox.fetch(request);
    }
    if (!pathname.startsWith('/v1/') && options.fallback) {
      const answer = await options.fallback(request);
      if (answer) return answer;
    }
    return relay ? relay.fetch(request, env) : new Response('starting', { status: 503 });
  };
  const server = serve({
    hostname: config.host,
    port: config.port,
    // Node's defaults let a client hold a socket 60 s for its headers and 300 s for the whole
    // request. Headers in 10 s, a request in 30 s (the relay cuts bodies off at 10 s itself),
    // checked every second; a response (an event stream) is not bound by these.
    serverOptions: { headersTimeout: 10_000, requestTimeout: 30_000, connectionsCheckingInterval: 1_000 },
    fetch: handle,
    // The adapter answers a request it can make no URL of (`*`, a backslash, a bad Host) with an
    // empty 400 unless given an error handler, which serve() does not pass on: its listener, with one.
    createServer: ((options: ServerOptions) =>
      createServer(options, getRequestListener(handle, { hostname: config.host, errorHandler: adapterRefusal(logger) }))) as typeof createServer,
  });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  }).catch(async (err: unknown) => {
    await store.close().catch(() => undefined);
    throw err;
  });
  // What Node's HTTP parser refuses before the relay sees a request (a bad request line, headers
  // too large) is answered as a problem too, as far as a raw socket allows.
  server.on('clientError', answerClientError);
  drain = gracefulShutdown(server as Server, logger);
  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;

  let payments = config.payments;
  // The embedded sandbox signs its webhooks with the relay's secret, or one made for this run.
  const webhookSecret = config.webhookSecret ?? (config.payments ? undefined : randomBytes(32).toString('hex'));
  if (!payments) {
    sandbox = createSandbox({
      publicUrl: `${url}${SANDBOX_PREFIX}`,
      basePath: SANDBOX_PREFIX,
      // Its players outlive a restart, beside the ledger that names them by userId.
      usersFile: join(config.dataDir, 'sandbox-users.json'),
      ...(webhookSecret ? { webhookSecret: signingSecret(webhookSecret) ?? webhookSecret } : {}),
      ...options.sandbox,
    });
    payments = { apiKey: sandbox.apiKey, baseUrl: `${url}${SANDBOX_PREFIX}` };
    logger.warn({ event: 'sandbox', url: `${url}${SANDBOX_PREFIX}` }, 'NO PAYMENTS_API_KEY: paying through the embedded sandbox; no real sats move');
    if (!isLoopback(config.host)) logger.warn({ event: 'sandbox_controls', host: config.host }, `the sandbox's test controls (${SANDBOX_CONTROLS}) answer this machine only`);
  }
  // On the sandbox with no token, one for this run, so the demo can show the operator's side.
  const adminToken = config.adminToken ?? (config.payments ? undefined : randomBytes(24).toString('base64url'));
  if (adminToken && !config.adminToken) logger.warn({ event: 'admin_token' }, `operator token for this run (set RELAY_ADMIN_TOKEN to keep one): ${adminToken}`);
  const settings = relayOptions(config);
  relay = createRelay({
    ...settings,
    payments: { ...payments, timeoutMs: config.paymentsTimeoutMs },
    store,
    logger,
    // On the sandbox, for development: any origin unless some are set; its own secrets, token and address.
    allowedOrigins: config.allowedOrigins.length || config.payments ? config.allowedOrigins : ['*'],
    webhooks: { ...settings.webhooks, secret: webhookSecret },
    ...(adminToken ? { adminToken } : {}),
    // The sandbox's webhooks come from this process, to this relay's own address.
    publicUrl: config.publicUrl ?? url,
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
    ...(adminToken ? { adminToken } : {}),
    close: (options = {}) => {
      // Not ready from the first moment, before the listener closes.
      started.drain();
      return drain!.shutdown({
        graceMs: options.graceMs ?? shutdownGraceMs(config),
        // The embedded sandbox answers the payments in flight on this same server.
        keepListening: !!sandbox,
        closeRelay: () => started.close(),
      });
    },
  };
}
