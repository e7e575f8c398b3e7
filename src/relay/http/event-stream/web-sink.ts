import type { EventSink, SinkListener } from './sink.js';

const encoder = new TextEncoder();

/**
 * An event stream's body as one ReadableStream, for runtimes that hand the relay no Node response
 * (Bun, Deno, edge, `app.request` in tests). Under Node the route writes to the response itself
 * (node-sink.ts): a web stream and its reader cost every open stream memory Node's own does not.
 */
export function webSink(listener: SinkListener): EventSink & { body: ReadableStream<Uint8Array> } {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    listener.closed();
  };
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
    // The reader wants more: whatever waits may be written.
    pull: () => listener.drained(),
    cancel: close,
  });
  return {
    body,
    write(text) {
      if (closed) return false;
      controller.enqueue(encoder.encode(text));
      return (controller.desiredSize ?? 1) > 0;
    },
    end() {
      if (closed) return;
      try {
        controller.close();
      } catch {
        // already closed or errored by the runtime
      }
      close();
    },
    drop() {
      if (closed) return;
      try {
        controller.error(new Error('the client was too far behind'));
      } catch {
        // already closed or errored by the runtime
      }
      close();
    },
  };
}
