import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { getPath } from 'hono/utils/url';
import type { Logger } from 'pino';
import { SECURITY_HEADERS } from '../relay/index.js';

/** What a shutdown did, as logged. */
export interface ShutdownReport {
  /** Requests being answered when it began (event streams aside). */
  inFlight: number;
  /** Event streams closed at once, so their clients reconnect to another relay. */
  streams: number;
  /** Requests still unanswered when the grace ran out: their connections were cut. */
  cut: number;
  /** Requests that arrived during the shutdown, answered 503 shutting_down. */
  refused: number;
  ms: number;
}

export interface GracefulShutdown {
  /** True once shutdown began: the server's handler answers with `refusal()` instead. */
  readonly draining: boolean;
  /** `503 shutting_down` with `Connection: close`: nothing was done, send it elsewhere. */
  refusal(): Response;
  /**
   * Stops taking connections (at once, or after `closeRelay` when `keepListening`: the embedded
   * sandbox pays through this very server), closes idle kept-alive sockets and event streams,
   * lets requests under way finish for up to `graceMs`, cuts what is left, then runs `closeRelay`
   * (which lets payments in flight settle and closes the store).
   */
  shutdown(options: { graceMs: number; keepListening?: boolean; closeRelay: () => Promise<void> }): Promise<ShutdownReport>;
}

/**
 * An event stream: a GET of /v1/events as the router reads the path (Hono's getPath: decoded, and
 * from an absolute-form target too), so `/v1/%65vents` is ended as a stream, not waited for.
 */
const isStream = (req: IncomingMessage) => {
  const url = req.url ?? '';
  return req.method === 'GET' && /^\/v1\/events\/?$/.test(getPath({ url: /^https?:\/\//i.test(url) ? url : `http://relay${url}` } as Request));
};

/** Watches a Node server's requests so that it can stop without losing one. */
export function gracefulShutdown(server: Server, logger: Logger): GracefulShutdown {
  const active = new Map<ServerResponse, IncomingMessage>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    active.set(res, req);
    res.once('close', () => active.delete(res));
  });
  let draining = false;
  let refused = 0;
  const body = JSON.stringify({
    type: 'https://github.com/rewardbus/rewardbus/blob/main/docs/relay-api.md#shutting_down',
    title: 'The relay is shutting down; try another, or again shortly',
    status: 503,
    code: 'shutting_down',
  });

  return {
    get draining() {
      return draining;
    },
    refusal() {
      refused++;
      // Connection: close, so the client (or the proxy) opens its next request elsewhere.
      return new Response(body, {
        status: 503,
        headers: [['content-type', 'application/problem+json'], ['retry-after', '1'], ['connection', 'close'], ...SECURITY_HEADERS.map(([k, v]): [string, string] => [k, v])],
      });
    },
    async shutdown({ graceMs, keepListening = false, closeRelay }) {
      draining = true;
      const started = Date.now();
      const listening = new Promise<void>((resolve) => (keepListening ? resolve() : server.close(() => resolve())));
      let streams = 0;
      for (const [res, req] of active) {
        if (!isStream(req)) continue;
        streams++;
        active.delete(res);
        // Ended as a response ends (the last chunk), not cut: the client (through a proxy too)
        // sees the stream end and reconnects, and the proxy logs no upstream failure.
        res.end();
      }
      const inFlight = active.size;
      logger.info(
        { event: 'shutdown', inFlight, streams, graceMs },
        `shutting down: ${keepListening ? 'refusing new requests' : 'no new connections'}, ${streams} event streams closed, waiting for ${inFlight} requests`,
      );
      // A kept-alive socket is closed as soon as it is idle; Node does it once at close(), this
      // catches those that go idle after. Not with the embedded sandbox on this server: the relay's
      // own sockets to it are among them, and one closed as the relay reuses it for a send makes
      // that payment unclear (needs_review). Clients there are refused with Connection: close.
      if (!keepListening) server.closeIdleConnections();
      const idle = keepListening ? undefined : setInterval(() => server.closeIdleConnections(), 50);
      const deadline = started + graceMs;
      while (active.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      clearInterval(idle);
      const cut = active.size;
      if (cut) logger.warn({ event: 'shutdown_cut', requests: cut, graceMs }, `${cut} requests still unanswered after ${graceMs} ms: their connections are cut`);
      server.closeAllConnections();
      // Payments in flight settle here, whatever became of their requests.
      await closeRelay();
      if (keepListening) {
        server.close();
        server.closeAllConnections();
      }
      await listening;
      const report = { inFlight, streams, cut, refused, ms: Date.now() - started };
      logger.info(
        { event: 'shutdown_done', ...report },
        `stopped in ${report.ms} ms: ${inFlight - cut} requests finished, ${cut} cut, ${refused} refused, ${streams} streams closed, the store closed`,
      );
      logger.flush();
      return report;
    },
  };
}
