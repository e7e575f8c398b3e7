/**
 * An event stream's body as one ReadableStream, written by the route and read by the runtime.
 * Hono's streamSSE makes a TransformStream and a second ReadableStream over it for every stream,
 * and keeps the request's context alive beside it: with 10,000 players listening that was most
 * of the relay's memory per stream (bench/many-streams.ts). The same writes, the same headers.
 */
export interface SseStream {
  body: ReadableStream<Uint8Array>;
  /** True once the client went away (or the stream was closed). */
  readonly aborted: boolean;
  /** Called once, when the client goes away. */
  onAbort(listener: () => void): void;
  /** Writes text; resolves when the reader wants more (nothing piles up for a client that reads slowly). */
  write(text: string): Promise<void>;
  /** One Server-Sent Event. */
  writeSSE(message: { id: string; event: string; data: string }): Promise<void>;
  close(): void;
}

const encoder = new TextEncoder();

export function sseStream(): SseStream {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let wanted: (() => void) | undefined;
  let aborted = false;
  const listeners: Array<() => void> = [];
  const abort = () => {
    if (aborted) return;
    aborted = true;
    wanted?.();
    for (const l of listeners.splice(0)) l();
  };
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
    pull() {
      const w = wanted;
      wanted = undefined;
      w?.();
    },
    cancel: abort,
  });
  const stream: SseStream = {
    body,
    get aborted() {
      return aborted;
    },
    onAbort(listener) {
      if (aborted) listener();
      else listeners.push(listener);
    },
    async write(text) {
      if (aborted) return;
      controller.enqueue(encoder.encode(text));
      if ((controller.desiredSize ?? 1) <= 0) await new Promise<void>((resolve) => (wanted = resolve));
    },
    writeSSE({ id, event, data }) {
      // As Hono's writeSSE: each line of the data its own `data:` line.
      return stream.write(
        `event: ${event}\n${data
          .split(/\r\n|\r|\n/)
          .map((line) => `data: ${line}`)
          .join('\n')}\nid: ${id}\n\n`,
      );
    },
    close() {
      if (aborted) return;
      try {
        controller.close();
      } catch {
        // already closed or errored by the runtime
      }
      abort();
    },
  };
  return stream;
}
