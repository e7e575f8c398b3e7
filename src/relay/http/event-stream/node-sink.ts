import type { EventSink, SinkListener } from './sink.js';

/** What the route needs of Node's `ServerResponse` (http.ServerResponse has it all). */
export interface NodeOutgoing {
  writeHead(status: number, headers: Record<string, string>): unknown;
  flushHeaders(): void;
  write(chunk: string): boolean;
  end(): unknown;
  on(event: 'drain' | 'close', listener: () => void): unknown;
  readonly writableEnded: boolean;
  readonly destroyed: boolean;
}

/**
 * Node's response for this request, when @hono/node-server passed it (`env.outgoing`), else
 * undefined: the relay stays a web-standard handler, and elsewhere answers with a web stream.
 */
export function nodeOutgoing(env: unknown): NodeOutgoing | undefined {
  const out = (env as { outgoing?: Partial<NodeOutgoing> } | undefined)?.outgoing;
  return out && typeof out.writeHead === 'function' && typeof out.write === 'function' && typeof out.flushHeaders === 'function' && typeof out.on === 'function'
    ? (out as NodeOutgoing)
    : undefined;
}

/**
 * An event stream written straight to Node's response: its head at once, then text as it comes,
 * Node's own back-pressure (`write` false until `drain`). No web stream, reader or loop a stream:
 * with 10,000 players listening that is most of what each stream cost (bench/many-streams.ts).
 * The handler then answers @hono/node-server's RESPONSE_ALREADY_SENT.
 */
export function nodeSink(out: NodeOutgoing, headers: Record<string, string>, listener: SinkListener): EventSink {
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    listener.closed();
  };
  out.on('close', close);
  out.on('drain', () => listener.drained());
  out.writeHead(200, headers);
  out.flushHeaders();
  // Gone before the stream began: its 'close' has been and will not come again.
  if (out.destroyed) queueMicrotask(close);
  // After end() (the shutdown ends streams itself), a write would be an error event on the response.
  const open = () => !closed && !out.writableEnded && !out.destroyed;
  return {
    write: (text) => open() && out.write(text),
    end() {
      if (open()) out.end();
      close();
    },
  };
}
