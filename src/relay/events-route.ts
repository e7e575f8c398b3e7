import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { RelayEnv } from './context.js';
import type { EventHub, EventLog, PlayerEvent } from './event-log.js';

const HEARTBEAT_MS = 15_000;

/**
 * `GET /v1/events`: the player's events as Server-Sent Events. A reconnect with Last-Event-ID
 * (header, or `lastEventId` in the query) first gets everything it missed.
 */
export function eventsRoute(events: EventLog, hub: EventHub) {
  return new Hono<RelayEnv>().get('/', (c) => {
    const { userId } = c.get('player');
    const lastEventId = c.req.header('last-event-id') ?? c.req.query('lastEventId');
    const after = Number(lastEventId) || 0;
    return streamSSE(c, async (stream) => {
      let lastSent = after;
      let wake: (() => void) | undefined;
      const live: PlayerEvent[] = [];
      // Subscribe before reading the backlog, so nothing falls between the two.
      const unsubscribe = hub.subscribe(userId, (e) => {
        live.push(e);
        wake?.();
      });
      stream.onAbort(() => {
        unsubscribe();
        wake?.();
      });
      const send = async (e: PlayerEvent) => {
        if (e.id <= lastSent) return;
        lastSent = e.id;
        await stream.writeSSE({ id: String(e.id), event: e.type, data: JSON.stringify(e.data) });
      };
      // A first connection starts from now; a reconnection (any Last-Event-ID, 0 for all) gets what it missed.
      if (lastEventId !== undefined) for (const e of await events.since(userId, after)) await send(e);
      while (!stream.aborted) {
        while (live.length) await send(live.shift()!);
        const timedOut = await new Promise<boolean>((resolve) => {
          const t = setTimeout(() => resolve(true), HEARTBEAT_MS);
          wake = () => {
            clearTimeout(t);
            resolve(false);
          };
        });
        wake = undefined;
        if (timedOut && !stream.aborted) await stream.write(': keep-alive\n\n');
      }
      unsubscribe();
    });
  });
}
