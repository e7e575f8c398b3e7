import { expect } from 'vitest';

/** Reads Server-Sent Events until `count` have come (or the time is up). */
export async function readSse(relayUrl: string, token: string, count: number, lastEventId?: string, waitMs = 5000) {
  const controller = new AbortController();
  const res = await fetch(`${relayUrl}/v1/events?token=${encodeURIComponent(token)}`, {
    headers: lastEventId ? { 'last-event-id': lastEventId } : {},
    signal: controller.signal,
  });
  expect(res.headers.get('content-type')).toContain('text/event-stream');
  const events: SseMessage[] = [];
  const deadline = setTimeout(() => controller.abort(), waitMs);
  try {
    for await (const message of sseMessages(res)) {
      events.push(message);
      if (events.length >= count) break;
    }
  } catch {
    // aborted at the deadline
  } finally {
    clearTimeout(deadline);
    controller.abort();
  }
  return events;
}

export interface SseMessage {
  id: string;
  event: string;
  data: Record<string, unknown>;
}

/**
 * An event stream kept open while a test acts: `events` fills as messages come, `until` waits for
 * one that matches. It starts with `Last-Event-ID: 0` by default, so nothing stored before the
 * connection is established is missed.
 */
export async function openSse(relayUrl: string, token: string, lastEventId = '0') {
  const controller = new AbortController();
  const res = await fetch(`${relayUrl}/v1/events?token=${encodeURIComponent(token)}`, { headers: { 'last-event-id': lastEventId }, signal: controller.signal });
  expect(res.headers.get('content-type')).toContain('text/event-stream');
  const events: SseMessage[] = [];
  const reading = (async () => {
    for await (const message of sseMessages(res)) events.push(message);
  })().catch(() => undefined);
  return {
    events,
    /** The first message matching `match`, within `timeoutMs`. */
    async until(match: (m: SseMessage) => boolean, timeoutMs = 5000): Promise<SseMessage> {
      let found: SseMessage | undefined;
      await expect.poll(() => (found = events.find(match)), { timeout: timeoutMs, interval: 20 }).toBeDefined();
      return found!;
    },
    async close() {
      controller.abort();
      await reading;
    },
  };
}

/** The messages of an event stream's body, as they come. */
export async function* sseMessages(res: Response): AsyncGenerator<SseMessage> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const message = parseSseBlock(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
      if (message) yield message;
    }
  }
}

/** One Server-Sent Events block (the lines between blank lines) as a message, if it carries data. */
function parseSseBlock(block: string): SseMessage | undefined {
  const field = (name: string) =>
    block
      .split('\n')
      .find((l) => l.startsWith(`${name}:`))
      ?.slice(name.length + 1)
      .trim();
  const data = field('data');
  return data ? { id: field('id')!, event: field('event')!, data: JSON.parse(data) as Record<string, unknown> } : undefined;
}
