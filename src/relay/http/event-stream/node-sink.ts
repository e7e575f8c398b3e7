import type { NodeOutgoing } from '../context.js';
import type { EventSink, SinkListener } from './sink.js';

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
    drop() {
      out.destroy();
      close();
    },
  };
}
