import { expect } from 'vitest';

/** Reads Server-Sent Events until `count` have come (or the time is up). */
export async function readSse(relayUrl: string, token: string, count: number, lastEventId?: string, waitMs = 5000) {
  const controller = new AbortController();
  const res = await fetch(`${relayUrl}/v1/events?token=${encodeURIComponent(token)}`, {
    headers: lastEventId ? { 'last-event-id': lastEventId } : {},
    signal: controller.signal,
  });
  expect(res.headers.get('content-type')).toContain('text/event-stream');
  const events: Array<{ id: string; event: string; data: Record<string, unknown> }> = [];
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  const deadline = setTimeout(() => controller.abort(), waitMs);
  try {
    while (events.length < count) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const field = (name: string) => block.split('\n').find((l) => l.startsWith(`${name}:`))?.slice(name.length + 1).trim();
        if (field('data')) events.push({ id: field('id')!, event: field('event')!, data: JSON.parse(field('data')!) as Record<string, unknown> });
      }
    }
  } catch {
    // aborted at the deadline
  } finally {
    clearTimeout(deadline);
    controller.abort();
  }
  return events;
}

